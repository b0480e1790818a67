//===- Solve.h - The search space as a MILP, and by enumeration -*- C++ -*-===//

#ifndef KINA_LIB_AUTOSHARD_SOLVE_H
#define KINA_LIB_AUTOSHARD_SOLVE_H

#include "Problem.h"

#include "Kina/AutoShard/Milp.h"

namespace mlir::kina::autoshard {

struct Solution {
  Milp::Result result;
  SmallVector<int> choices; // per node
  double objective = 0, bound = 0; // constants included
  int variables = 0, constraints = 0;
};

/// Poses `problem` as a mixed-integer program (docs/design.md, "Automatic
/// sharding") and solves it with CBC.
Solution solve(Problem &problem);

/// The best objective over every assignment of the nodes' choices, and
/// how many assignments there were; none when there are more than
/// `limit`.
std::optional<std::pair<int64_t, double>> enumerateAll(Problem &problem,
                                                       int64_t limit);

} // namespace mlir::kina::autoshard

#endif // KINA_LIB_AUTOSHARD_SOLVE_H
