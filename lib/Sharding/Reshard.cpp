//===- Reshard.cpp - Placement changes as collectives ---------------------===//
#include "Kina/Sharding/Reshard.h"

#include "Kina/Sharding/Partition.h"

#include <algorithm>
#include <set>

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kina;

SmallVector<StringAttr> mlir::kina::axesInNameOrder(MeshOp mesh) {
  SmallVector<StringAttr> axes = llvm::map_to_vector(
      mesh.getAxes(), [](Attribute a) { return cast<StringAttr>(a); });
  llvm::sort(axes, [](StringAttr a, StringAttr b) {
    return a.getValue() < b.getValue();
  });
  return axes;
}

FailureOr<Value>
mlir::kina::convertPlacement(OpBuilder &builder, Location loc, Value value,
                             PlacementAttr target,
                             function_ref<void(Operation *)> onCreated,
                             std::vector<mlir::kina::WeighedPlan> *weighed) {
  PlacementAttr source = placementOf(value);
  if (!source.isMesh() || !target.isMesh())
    return emitError(loc) << "internal error: converting " << source.str()
                          << " to " << target.str();
  for (StringAttr axis : target.getPartial())
    if (!source.isPartialOver(axis))
      return emitError(loc)
             << "a value placed " << source.str() << " cannot become "
             << target.str() << ": a partial sum over '" << axis.getValue()
             << "' comes from a contraction or a reduction split over it, "
                "and no collective makes one (declare the result "
             << source.str()
             << " instead)";
  MeshOp mesh = MeshOp::lookup(builder.getInsertionBlock()->getParentOp());
  // Appends `op` (null: a step that is not possible) to the chain that
  // ends at `current`.
  auto extend = [](Operation *op, Value &current,
                   function_ref<void(Operation *)> made) {
    if (!op)
      return false;
    made(op);
    current = op->getResult(0);
    return true;
  };
  auto step = [&](Operation *op) {
    return success(extend(op, value, onCreated));
  };
  // Removals first (each leaves a valid placement), then the moves, then
  // the cuts, so that no intermediate placement uses a mesh axis twice.
  // The removals of one mesh axis (a reduction, a gather) change the
  // block the next axis's move; they go axis by axis in the order that
  // sends the fewest bytes (a partial sum reduced while its block is
  // still split, then gathered), whatever order the mesh declares its
  // axes in; ties keep the names' order (axesInNameOrder).
  auto removeOver = [&](ArrayRef<StringAttr> order, Value &current,
                        function_ref<void(Operation *)> made) {
    for (StringAttr axis : order) {
      PlacementAttr now = placementOf(current);
      std::optional<int64_t> to = target.getAxisSplitBy(axis);
      auto take = [&](Operation *op) { return extend(op, current, made); };
      if (now.isPartialOver(axis) && !target.isPartialOver(axis) &&
          !take(to && !now.getSplitOf(*to)
                    ? tryCreateInferred<ReduceScatterOp>(
                          builder, loc, current, *to, axis.getValue())
                          .getOperation()
                    : tryCreateInferred<AllReduceOp>(builder, loc, current,
                                                     ReductionKind::sum,
                                                     axis.getValue())
                          .getOperation()))
        return false;
      std::optional<int64_t> from = placementOf(current).getAxisSplitBy(axis);
      // A split the target does not keep on this mesh axis, and that
      // cannot move to its new axis (taken by another mesh axis) is
      // gathered.
      if (from && from != to && (!to || placementOf(current).getSplitOf(*to)) &&
          !take(tryCreateInferred<AllGatherOp>(builder, loc, current, *from,
                                               axis.getValue())))
        return false;
    }
    return true;
  };
  SmallVector<StringAttr> order = axesInNameOrder(mesh);
  SmallVector<unsigned> indices =
      llvm::to_vector(llvm::seq<unsigned>(0, order.size()));
  SmallVector<StringAttr> cheapest = order;
  std::optional<int64_t> fewest;
  std::vector<mlir::kina::WeighedPlan> tries;
  std::set<int64_t> totals;
  do {
    SmallVector<StringAttr> tried =
        llvm::map_to_vector(indices, [&](unsigned i) { return order[i]; });
    Value scratch = value;
    SmallVector<Operation *> made;
    bool built = removeOver(tried, scratch,
                            [&](Operation *op) { made.push_back(op); });
    int64_t bytes = 0;
    for (Operation *op : made)
      bytes += bytesSentPerDevice(op);
    for (Operation *op : llvm::reverse(made))
      op->erase();
    if (!built)
      continue;
    if (!fewest || bytes < *fewest) {
      fewest = bytes;
      cheapest = tried;
    }
    totals.insert(bytes);
    tries.push_back(
        {llvm::join(llvm::map_range(tried, [](StringAttr a) { return a.str(); }),
                    " then "),
         bytes});
  } while (std::next_permutation(indices.begin(), indices.end()));
  if (weighed && totals.size() > 1)
    *weighed = tries;
  if (!removeOver(cheapest, value, [&](Operation *op) { onCreated(op); }))
    return emitError(loc) << "internal error: converting " << source.str()
                          << " to " << target.str();
  for (StringAttr axis : order) {
    std::optional<int64_t> from = placementOf(value).getAxisSplitBy(axis);
    std::optional<int64_t> to = target.getAxisSplitBy(axis);
    if (from && to && from != to && !placementOf(value).getSplitOf(*to))
      if (failed(step(createInferred<AllToAllOp>(builder, loc, value, *from,
                                                 *to, axis.getValue()))))
        return failure();
  }
  for (StringAttr axis : order) {
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

int64_t mlir::kina::bytesSentPerDevice(Collective kind, int64_t elements,
                                       int64_t elementBytes, int64_t n) {
  switch (kind) {
  case Collective::AllGather:
    return (n - 1) * elements * elementBytes;
  case Collective::AllReduce: // each member's block rounded up
    return 2 * (n - 1) * llvm::divideCeil(elements, n) * elementBytes;
  case Collective::ReduceScatter:
  case Collective::AllToAll:
    return (n - 1) * elements / n * elementBytes;
  case Collective::Permute:
    return elements * elementBytes;
  }
  llvm_unreachable("a collective kind");
}

int64_t mlir::kina::bytesSentPerDevice(Operation *collective) {
  auto input = cast<KinaTensorType>(collective->getOperand(0).getType());
  MeshOp mesh = MeshOp::lookup(collective);
  auto named = dyn_cast<CollectiveOpInterface>(collective);
  if (!mesh || !named)
    return 0;
  std::optional<Collective> kind =
      TypeSwitch<Operation *, std::optional<Collective>>(collective)
          .Case([](AllGatherOp) { return Collective::AllGather; })
          .Case([](AllReduceOp) { return Collective::AllReduce; })
          .Case([](ReduceScatterOp) { return Collective::ReduceScatter; })
          .Case([](AllToAllOp) { return Collective::AllToAll; })
          .Case([](PermuteOp) { return Collective::Permute; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind) // all_slice: each device keeps its block
    return 0;
  return bytesSentPerDevice(*kind,
                            ShapedType::getNumElements(blockShape(input, mesh)),
                            mlir::kina::dtypeInfo(input.getDType()).bytes,
                            mesh.getAxisSize(named.getOver()).value_or(1));
}
