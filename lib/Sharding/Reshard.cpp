//===- Reshard.cpp - Placement changes as collectives ---------------------===//
#include "Kina/Sharding/Reshard.h"

using namespace mlir;
using namespace mlir::kina;

FailureOr<Value>
mlir::kina::convertPlacement(OpBuilder &builder, Location loc, Value value,
                             PlacementAttr target,
                             function_ref<void(Operation *)> onCreated) {
  auto placementOf = [](Value v) {
    return cast<KinaTensorType>(v.getType()).getPlacement();
  };
  PlacementAttr source = placementOf(value);
  if (!source.isMesh() || !target.isMesh())
    return emitError(loc) << "internal error: converting " << source.str()
                          << " to " << target.str();
  MeshOp mesh = MeshOp::lookup(builder.getInsertionBlock()->getParentOp());
  auto step = [&](Operation *op) -> LogicalResult {
    if (!op)
      return failure();
    onCreated(op);
    value = op->getResult(0);
    return success();
  };
  // Removals first (each leaves a valid placement), then the moves, then
  // the cuts, so that no intermediate placement uses a mesh axis twice.
  for (Attribute attr : mesh.getAxes()) {
    auto axis = cast<StringAttr>(attr);
    PlacementAttr now = placementOf(value);
    std::optional<int64_t> to = target.getAxisSplitBy(axis);
    if (now.isPartialOver(axis) && !target.isPartialOver(axis)) {
      Operation *op =
          to && !now.getSplitOf(*to)
              ? createInferred<ReduceScatterOp>(builder, loc, value, *to,
                                                axis.getValue())
                    .getOperation()
              : createInferred<AllReduceOp>(builder, loc, value,
                                            ReductionKind::sum, axis.getValue())
                    .getOperation();
      if (failed(step(op)))
        return failure();
    }
    std::optional<int64_t> from = placementOf(value).getAxisSplitBy(axis);
    // A split the target does not keep on this mesh axis, and that cannot
    // move to its new axis (taken by another mesh axis) is gathered.
    if (from && from != to && (!to || placementOf(value).getSplitOf(*to)))
      if (failed(step(createInferred<AllGatherOp>(builder, loc, value, *from,
                                                  axis.getValue()))))
        return failure();
  }
  for (Attribute attr : mesh.getAxes()) {
    auto axis = cast<StringAttr>(attr);
    std::optional<int64_t> from = placementOf(value).getAxisSplitBy(axis);
    std::optional<int64_t> to = target.getAxisSplitBy(axis);
    if (from && to && from != to && !placementOf(value).getSplitOf(*to))
      if (failed(step(createInferred<AllToAllOp>(builder, loc, value, *from,
                                                 *to, axis.getValue()))))
        return failure();
  }
  for (Attribute attr : mesh.getAxes()) {
    auto axis = cast<StringAttr>(attr);
    std::optional<int64_t> to = target.getAxisSplitBy(axis);
    if (to && placementOf(value).getSplitOf(*to) != axis)
      if (failed(step(createInferred<AllSliceOp>(builder, loc, value, *to,
                                                 axis.getValue()))))
        return failure();
  }
  if (placementOf(value) != target)
    return emitError(loc) << "cannot convert " << source.str() << " to "
                          << target.str() << " with collectives";
  return value;
}

int64_t mlir::kina::bytesSentPerDevice(Operation *collective) {
  auto input = cast<KinaTensorType>(collective->getOperand(0).getType());
  MeshOp mesh = MeshOp::lookup(collective);
  auto over = collective->getAttrOfType<StringAttr>("over");
  if (!over)
    over =
        dyn_cast_or_null<StringAttr>(getInherentAttrs(collective).get("over"));
  if (!mesh || !over)
    return 0;
  int64_t n = mesh.getAxisSize(over.getValue()).value_or(1);
  int64_t block =
      input.getNumElements() * ::kina::dtypeInfo(input.getDType()).bytes;
  PlacementAttr placement = input.getPlacement();
  if (placement.isMesh())
    for (StringAttr axis : placement.getOver())
      block /= mesh.getAxisSize(axis.getValue()).value_or(1);
  if (isa<AllGatherOp>(collective))
    return (n - 1) * block;
  if (isa<AllReduceOp>(collective))
    return 2 * (n - 1) * block / n;
  if (isa<ReduceScatterOp, AllToAllOp>(collective))
    return (n - 1) * block / n;
  return 0;
}
