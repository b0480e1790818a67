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

/// `problem` posed as a mixed-integer program (docs/design.md, "Automatic
/// sharding"): the program and the columns of its choices, which the
/// alternatives and the "why not" questions solve again with a cut or a
/// choice fixed.
class Formulation {
public:
  explicit Formulation(Problem &problem);
  /// Solves `program` (this formulation's, perhaps with cuts or bounds
  /// added) with CBC.
  Solution solve(const Milp &program, Milp::Options options) const;
  Solution solve(const Milp &program) const {
    return solve(program, defaultOptions());
  }
  Solution solve() const { return solve(milp); }
  /// Among the plans within `tolerance` of `best`'s objective, one whose
  /// parameters hold the fewest bytes per device (the tie-break: a
  /// split parameter over a replicated one); `best` when it is alone.
  Solution breakTies(const Solution &best, double tolerance) const;
  /// The column of node n's choice k.
  int column(int node, int choice) const { return s[node][choice]; }

  Milp milp;

private:
  Milp::Options defaultOptions() const;
  /// The budget's terms per program point for the conversions' results:
  /// each conversion (value, target) is held from the first demand that
  /// needs it to the last, by columns that are 1 exactly there. `need`
  /// gives the columns whose sum says that one demand needs it
  /// ({kAlways, 1}: always).
  std::vector<std::vector<std::pair<int, double>>> conversionsLive(
      llvm::function_ref<std::vector<std::pair<int, double>>(const Demand &)>
          need);
  static constexpr int kAlways = -1;
  Problem &problem;
  double constant = 0;
  SmallVector<SmallVector<int>> s;
};

/// The best objective over every assignment of the nodes' choices, and
/// how many assignments there were; none when there are more than
/// `limit`.
std::optional<std::pair<int64_t, double>> enumerateAll(Problem &problem,
                                                       int64_t limit);

} // namespace mlir::kina::autoshard

#endif // KINA_LIB_AUTOSHARD_SOLVE_H
