//===- AutoShard.h - The cheapest placement of a function -------*- C++ -*-===//
//
// Automatic sharding: every parameter, intermediate and result of a
// mesh-placed function placed by a mixed-integer program over every
// strategy of every op (Strategies.h), solved by CBC (Milp.h), and the
// plan written into the IR with the collectives it needs, so that
// partitioning runs it unchanged (the propagation leaves the function
// alone). Placements the program writes are pins; `@auto` is free.
//
//===----------------------------------------------------------------------===//

#ifndef KINA_AUTOSHARD_AUTOSHARD_H
#define KINA_AUTOSHARD_AUTOSHARD_H

#include "Kina/AutoShard/AutoShardOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kina {

/// Places every value of `fn` (one block after inlining); fails with a
/// located error (an infeasible budget names the point and its tensors).
mlir::LogicalResult autoShard(mlir::func::FuncOp fn,
                              const AutoShardOptions &options,
                              AutoShardReport *report = nullptr);

} // namespace mlir::kina

#endif // KINA_AUTOSHARD_AUTOSHARD_H
