//===- Apply.h - A solved plan written into the IR --------------*- C++ -*-===//

#ifndef KINA_LIB_AUTOSHARD_APPLY_H
#define KINA_LIB_AUTOSHARD_APPLY_H

#include "Problem.h"

namespace mlir::kina::autoshard {

/// Writes `choices` (one per node of `problem`) into its function; each
/// collective that moves data gets a remark saying why, and its record
/// in `records`.
LogicalResult applyPlan(Problem &problem, ArrayRef<int> choices,
                        std::vector<CollectiveRecord> &records);

/// `placement` with its partial sums reduced, its splits kept.
PlacementAttr whole(PlacementAttr placement);

} // namespace mlir::kina::autoshard

#endif // KINA_LIB_AUTOSHARD_APPLY_H
