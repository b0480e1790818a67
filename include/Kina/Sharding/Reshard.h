//===- Reshard.h - Placement changes as collectives -------------*- C++ -*-===//
#ifndef KINA_SHARDING_RESHARD_H
#define KINA_SHARDING_RESHARD_H

#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Sharding/CostRecords.h"

namespace mlir::kina {

/// The collectives that turn `value` (a decided mesh placement) into the
/// same global tensor placed `target`, one mesh axis at a time: partial
/// sums reduced (`all_reduce`, or `reduce_scatter` when the target splits
/// over that axis), splits moved (`all_to_all`), gathered (`all_gather`)
/// or cut (`all_slice`). Each op made is passed to `onCreated`. Fails
/// (with an error at `loc`) when a step is not possible.
/// When `weighed` is given and the order of the mesh axes changes the
/// bytes sent, it gets the orders tried ("x then y") and their bytes;
/// ties keep the axes' name order (axesInNameOrder).
FailureOr<Value> convertPlacement(OpBuilder &builder, Location loc, Value value,
                                  PlacementAttr target,
                                  function_ref<void(Operation *)> onCreated,
                                  std::vector<WeighedPlan> *weighed = nullptr);

/// The mesh's axes in the order of their names: the order every choice
/// that weighs the axes tries them in (ties keep the first tried), so
/// that the order a mesh declares its axes in never changes a plan.
SmallVector<StringAttr> axesInNameOrder(MeshOp mesh);

/// The collectives that move data, for the cost model.
enum class Collective {
  AllGather,
  AllReduce,
  ReduceScatter,
  AllToAll,
  Permute
};

/// The bytes each device sends to run `collective`, as the runtime
/// (lib/Runtime/Collectives.c) runs it, where L is the device's block of
/// the operand (e elements) and n the size of the mesh axis: all_gather
/// (n-1)L, all_reduce 2(n-1) ceil(e/n) elements (a reduce-scatter, then
/// an all-gather), reduce_scatter and all_to_all (n-1)L/n, all_slice 0,
/// permute L (what a device with a target sends; without `cyclic`, the
/// |shift| devices at the axis's end send nothing).
int64_t bytesSentPerDevice(Operation *collective);
/// The same for a collective of `kind` on a block of `elements` elements
/// of `elementBytes` each, over a mesh axis of `n` devices.
int64_t bytesSentPerDevice(Collective kind, int64_t elements,
                           int64_t elementBytes, int64_t n);

} // namespace mlir::kina

#endif // KINA_SHARDING_RESHARD_H
