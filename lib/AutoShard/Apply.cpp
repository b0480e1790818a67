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

LogicalResult
mlir::kina::autoshard::applyPlan(Problem &problem, ArrayRef<int> choices,
                                 std::vector<CollectiveRecord> &records) {
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
  auto convertTo = [&](Operation *at, Value value, PlacementAttr target,
                       const std::string &why) -> FailureOr<Value> {
    if (placementOf(value) == target)
      return value;
    auto key = std::make_pair(value, Attribute(target));
    if (Value earlier = converted.lookup(key))
      return earlier;
    OpBuilder builder(at);
    SmallVector<Operation *> made;
    FailureOr<Value> result =
        convertPlacement(builder, at->getLoc(), value, target,
                         [&](Operation *op) { made.push_back(op); });
    if (failed(result))
      return failure();
    converted[key] = *result;
    for (Operation *op : made) {
      int64_t bytes = bytesSentPerDevice(op);
      if (bytes == 0)
        continue; // all_slice: nothing moves
      CollectiveRecord record;
      record.function = fn.getName().str();
      record.location = locationText(at->getLoc());
      record.kind = op->getName().stripDialect().str();
      record.over = cast<CollectiveOpInterface>(op).getOver().str();
      record.placement = placementOf(op->getOperand(0)).str();
      record.reason = why;
      record.bytesPerDevice = bytes;
      emitRemark(at->getLoc()) << remarkText(record);
      records.push_back(std::move(record));
    }
    return result;
  };

  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      PlacementAttr target = placementOf(reshard.getResult());
      FailureOr<Value> value = convertTo(
          op, reshard.getInput(), target,
          "the program places the value " + target.str() + " here");
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
        FailureOr<Value> value =
            convertTo(op, returned, target,
                      "result #" + std::to_string(j) + " is returned " +
                          target.str());
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
      FailureOr<Value> value = convertTo(
          op, op->getOperand(i), node.operands[k][i],
          "the plan computes " + op->getName().getStringRef().str() + " as " +
              node.text[k] + ", which takes operand #" + std::to_string(i) +
              " placed " + node.operands[k][i].str());
      if (failed(value))
        return failure();
      op->setOperand(i, *value);
    }
    withPlacement(op->getResult(0), node.results[k]);
  }
  return success();
}
