//===- Apply.cpp - A solved plan written into the IR ----------------------===//
//
// Each parameter and op result gets the placement its node's choice
// gives; each operand, ascription and returned value is converted where
// its choice needs another placement, by the collectives the cost was
// counted from (convertPlacement), one conversion per value and target.
//
//===----------------------------------------------------------------------===//

#include "Apply.h"

#include "Kina/Sharding/Reshard.h"

using namespace mlir;
using namespace mlir::kina;
using namespace mlir::kina::autoshard;

PlacementAttr mlir::kina::autoshard::whole(PlacementAttr placement) {
  for (StringAttr axis : placement.getPartial())
    placement = placement.withoutPartial(axis);
  return placement;
}

LogicalResult mlir::kina::autoshard::applyPlan(Problem &problem,
                                               ArrayRef<int> choices) {
  func::FuncOp fn = problem.function;
  Block &body = fn.getBody().front();
  auto withPlacement = [](Value value, PlacementAttr placement) {
    value.setType(
        cast<KinaTensorType>(value.getType()).withPlacement(placement));
  };
  for (auto [n, node] : llvm::enumerate(problem.nodes))
    if (node.argument >= 0)
      withPlacement(body.getArgument(node.argument),
                    node.results[choices[n]]);

  DenseMap<std::pair<Value, Attribute>, Value> converted;
  auto convertTo = [&](Operation *at, Value value,
                       PlacementAttr target) -> FailureOr<Value> {
    if (placementOf(value) == target)
      return value;
    auto key = std::make_pair(value, Attribute(target));
    if (Value earlier = converted.lookup(key))
      return earlier;
    OpBuilder builder(at);
    FailureOr<Value> result = convertPlacement(builder, at->getLoc(), value,
                                               target, [](Operation *) {});
    if (succeeded(result))
      converted[key] = *result;
    return result;
  };

  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      FailureOr<Value> value =
          convertTo(op, reshard.getInput(), placementOf(reshard.getResult()));
      if (failed(value))
        return failure();
      reshard.getResult().replaceAllUsesWith(*value);
      reshard->erase();
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Type> results;
      for (auto [j, returned] : llvm::enumerate(ret.getOperands())) {
        auto declared = cast<KinaTensorType>(fn.getResultTypes()[j]);
        PlacementAttr target = declared.getPlacement();
        if (auto reuses = fn.getResultAttrOfType<IntegerAttr>(
                j, KinaDialect::ReusesAttrHelper::getNameStr()))
          target = placementOf(body.getArgument(reuses.getInt()));
        else if (target.isAuto())
          target = whole(placementOf(returned));
        FailureOr<Value> value = convertTo(op, returned, target);
        if (failed(value))
          return failure();
        ret->setOperand(j, *value);
        results.push_back(declared.withPlacement(target));
      }
      fn.setType(FunctionType::get(fn.getContext(), body.getArgumentTypes(),
                                   results));
      continue;
    }
    auto it = problem.nodeOf.find(op->getResult(0));
    if (it == problem.nodeOf.end())
      continue; // a constant: placed by the frontend
    const Node &node = problem.nodes[it->second];
    int k = choices[it->second];
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      FailureOr<Value> value =
          convertTo(op, op->getOperand(i), node.operands[k][i]);
      if (failed(value))
        return failure();
      op->setOperand(i, *value);
    }
    withPlacement(op->getResult(0), node.results[k]);
  }
  return success();
}
