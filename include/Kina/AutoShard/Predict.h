//===- Predict.h - The time a placed function is predicted to take -*- C++ -*-===//
//
// The time objective of automatic sharding, as one model for the solver's
// choices and for any placed function (a hand-written plan propagated):
// per op computed on blocks, the larger of its FLOPs over the FLOP rate
// and its blocks' bytes over the memory bandwidth; per collective its
// kind's latency + bytes each device sends / bandwidth.
//
//===----------------------------------------------------------------------===//

#ifndef KINA_AUTOSHARD_PREDICT_H
#define KINA_AUTOSHARD_PREDICT_H

#include "Kina/AutoShard/AutoShardOptions.h"
#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kina {

/// `op`'s seconds on one device when its operands are placed `operands`
/// and its result `result`.
double computeSeconds(Operation *op, ArrayRef<PlacementAttr> operands,
                      PlacementAttr result, MeshOp mesh,
                      const MachineModel &machine);

/// The seconds of `count` collectives of kind `kind` (kCollectiveKinds)
/// that send `bytes` per device in all.
double collectiveSeconds(int kind, int64_t count, int64_t bytes,
                         const MachineModel &machine);

/// The kind (index into kCollectiveKinds) of a collective that moves
/// data, or -1 (all_slice, or not a collective).
int collectiveKind(Operation *op);

/// The seconds `fn` (placed: after the propagation) is predicted to take
/// on one device, callees included.
double predictSeconds(func::FuncOp fn, const MachineModel &machine);

} // namespace mlir::kina

#endif // KINA_AUTOSHARD_PREDICT_H
