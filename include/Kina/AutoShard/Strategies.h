//===- Strategies.h - The ways one op or one value can be placed -*- C++ -*-===//
//
// The search space of automatic sharding, op by op: every map of an op's
// splittable factors (its sharding rule's parallel and contracting ones)
// to the mesh's axes, all axes together, each axis to one factor or to
// none; and every placement of a parameter. A factor goes to a mesh axis
// only where every dim of it divides by the axis size (the per-device
// ABI's equal blocks). A contracting factor on an axis leaves the result
// partial over it; an op that passes partial sums (passesPartialSums: a
// sum, a reshape, an add of summands...) may also take its operands
// partial over the axes no factor takes, and give a partial result.
//
//===----------------------------------------------------------------------===//

#ifndef KINA_AUTOSHARD_STRATEGIES_H
#define KINA_AUTOSHARD_STRATEGIES_H

#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Sharding/ShardingRules.h"

#include <string>

namespace mlir::kina {

/// One way to compute an op on the mesh: the placement each operand must
/// have and the result's.
struct Strategy {
  SmallVector<PlacementAttr> operands;
  PlacementAttr result;
  /// The devices the op's work is split over (1: every device computes
  /// all of it).
  int64_t ways = 1;
  /// "factor 0 over dp, factor 2 over tp", or "replicated".
  std::string text;
};

/// Every strategy of `op` under `rule` on `mesh`, replicated first, then
/// in the order of the mesh axes' names and the factors.
SmallVector<Strategy> enumerateStrategies(Operation *op,
                                          const ShardingRule &rule,
                                          MeshOp mesh);

/// Every whole (not partial) placement of a tensor of `type` on `mesh`:
/// replicated, and each dim split over each mesh axis that divides it
/// (one mesh axis per dim, one dim per mesh axis). Replicated first.
SmallVector<PlacementAttr> enumeratePlacements(KinaTensorType type,
                                               MeshOp mesh);

} // namespace mlir::kina

#endif // KINA_AUTOSHARD_STRATEGIES_H
