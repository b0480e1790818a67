//===- PartitionSpmd.cpp - One per-device function ------------------------===//
//
// The SPMD form of a propagated program: every mesh-placed value becomes
// the block one device holds (`@local`, the local shape), every op keeps
// its kind and computes on blocks (attributes that name a shape made
// local), and each collective stays, in its per-device view. Distributions
// from and gathers to the host stay `kina.reshard`s between `@host` and
// `@local`: the runtime gives each device its coordinates and its blocks.
//
//===----------------------------------------------------------------------===//

#include "Kina/Sharding/Partition.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::kina;

SmallVector<int64_t> mlir::kina::blockShape(KinaTensorType type, MeshOp mesh) {
  SmallVector<int64_t> shape(type.getShape());
  PlacementAttr placement = type.getPlacement();
  for (auto [dim, axis] :
       llvm::zip_equal(placement.getAxes(), placement.getOver()))
    shape[dim] /= *mesh.getAxisSize(axis.getValue());
  return shape;
}

/// `type` as one device holds it: its block, `@local`.
static Type localType(Type type, MeshOp mesh) {
  auto tensor = dyn_cast<KinaTensorType>(type);
  if (!tensor || !tensor.getPlacement().isMesh())
    return type;
  return KinaTensorType::get(type.getContext(), blockShape(tensor, mesh),
                             tensor.getElementType(),
                             PlacementAttr::getLocal(type.getContext()));
}

LogicalResult mlir::kina::partitionSpmd(func::FuncOp fn, MeshOp mesh) {
  if (fn.isExternal())
    return success();
  StringAttr global = KinaDialect::GlobalAttrHelper(fn.getContext()).getName();
  for (BlockArgument arg : fn.getArguments()) {
    Type local = localType(arg.getType(), mesh);
    if (local != arg.getType())
      fn.setArgAttr(arg.getArgNumber(), global, TypeAttr::get(arg.getType()));
    arg.setType(local);
  }
  SmallVector<Type> results;
  for (auto [i, type] : llvm::enumerate(fn.getFunctionType().getResults())) {
    results.push_back(localType(type, mesh));
    if (results.back() != type)
      fn.setResultAttr(i, global, TypeAttr::get(type));
  }
  fn.setType(FunctionType::get(fn.getContext(), fn.getBody().getArgumentTypes(),
                               results));
  WalkResult walk = fn.walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (auto type = dyn_cast<KinaTensorType>(result.getType());
          type && type.getPlacement().isAuto()) {
        op->emitError("a placement is not decided: run "
                      "--kina-propagate-sharding before partitioning");
        return WalkResult::interrupt();
      }
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      reshard.emitError("a per-device function cannot move values between "
                        "the host and the mesh; that is the runtime's, at "
                        "its boundary");
      return WalkResult::interrupt();
    }
    if (isa<func::CallOp, ReverseModeOp>(op)) {
      for (Value result : op->getResults())
        result.setType(localType(result.getType(), mesh));
      return WalkResult::advance();
    }
    auto rule = dyn_cast<InferResultTypeOpInterface>(op);
    if (!rule || !llvm::any_of(op->getResultTypes(),
                               [&](Type t) { return localType(t, mesh) != t; }))
      return WalkResult::advance();
    Type local = localType(op->getResult(0).getType(), mesh);
    if (auto named = dyn_cast<NamesShapeOpInterface>(op))
      named.setShape(cast<KinaTensorType>(local).getShape());
    if (isa<ConstantOp>(op) || !op->getNumOperands()) {
      op->getResult(0).setType(local);
      return WalkResult::advance();
    }
    // The op's own rule, on the blocks, says what a device computes.
    FailureOr<Type> inferred =
        rule.inferResultType(op->getOperandTypes(), getInherentAttrs(op), mesh,
                             [&] { return op->emitOpError("per device: "); });
    if (failed(inferred))
      return WalkResult::interrupt();
    op->getResult(0).setType(*inferred);
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}
