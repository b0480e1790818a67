//===- Milp.h - A mixed-integer linear program, solved by CBC ---*- C++ -*-===//
//
// The solver behind automatic sharding: variables with bounds, a linear
// cost and integrality; linear constraints; minimized by COIN-OR CBC
// (Debian's coinor-libcbc-dev) on one thread, so that the same program
// gives the same solution on every run. The result carries CBC's own
// lower bound beside its incumbent, so a plan's optimality gap is the
// solver's, not ours.
//
//===----------------------------------------------------------------------===//

#ifndef KINA_AUTOSHARD_MILP_H
#define KINA_AUTOSHARD_MILP_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir::kina {

/// Minimize sum(cost_j x_j) subject to the constraints and the bounds.
class Milp {
public:
  enum class Sense { LessEqual, GreaterEqual, Equal };

  /// A new variable, lower <= x <= upper; its index.
  int addVariable(std::string name, double lower, double upper, double cost,
                  bool integer);
  /// A binary variable (0 or 1) of cost `cost`; its index.
  int addBinary(std::string name, double cost) {
    return addVariable(std::move(name), 0, 1, cost, /*integer=*/true);
  }
  /// Bounds `variable` to [lower, upper].
  void setBounds(int variable, double lower, double upper) {
    variables[variable].lower = lower;
    variables[variable].upper = upper;
  }
  /// The objective's nonzero terms (variable, cost).
  std::vector<std::pair<int, double>> objectiveTerms() const {
    std::vector<std::pair<int, double>> terms;
    for (int j = 0; j < numVariables(); ++j)
      if (variables[j].cost != 0)
        terms.push_back({j, variables[j].cost});
    return terms;
  }
  /// Sets every objective coefficient to 0.
  void clearCosts() {
    for (Variable &v : variables)
      v.cost = 0;
  }
  /// Adds `cost` to the objective coefficient of `variable`.
  void addCost(int variable, double cost) { variables[variable].cost += cost; }
  /// sum(coefficient * x[variable]) `sense` rhs.
  void addConstraint(std::string name,
                     std::vector<std::pair<int, double>> terms, Sense sense,
                     double rhs);

  int numVariables() const { return static_cast<int>(variables.size()); }
  int numConstraints() const { return static_cast<int>(constraints.size()); }
  const std::string &variableName(int j) const { return variables[j].name; }

  struct Options {
    /// Stop after this many seconds with the incumbent and the bound.
    double secondsLimit = 60;
    /// Stop when (incumbent - bound) / |incumbent| is at most this.
    double relativeGap = 0;
    /// Stop after this many branch-and-bound nodes (a limit that, unlike
    /// seconds, gives the same answer on every machine); -1: none.
    int maxNodes = -1;
    /// Cut generation at the nodes (off: a quick search from `start`).
    bool cuts = true;
    /// A solution to start from (a value per variable), or empty.
    std::vector<double> start;
  };

  struct Result {
    enum class Status { Optimal, Feasible, Infeasible, NoSolution };
    Status status = Status::NoSolution;
    std::vector<double> values; // by variable index (empty without one)
    double objective = 0;       // the incumbent's cost
    double bound = 0;           // CBC's lower bound on the optimum
    double seconds = 0;         // the wall time CBC took
    /// (objective - bound) / max(|objective|, 1e-9); 0 when optimal.
    double gap() const;
    bool hasSolution() const {
      return status == Status::Optimal || status == Status::Feasible;
    }
  };

  /// Solves with CBC, single-threaded and silent.
  Result solve(const Options &options) const;
  Result solve() const { return solve(Options()); }

private:
  struct Variable {
    std::string name;
    double lower, upper, cost;
    bool integer;
  };
  struct Constraint {
    std::string name;
    std::vector<std::pair<int, double>> terms;
    Sense sense;
    double rhs;
  };
  std::vector<Variable> variables;
  std::vector<Constraint> constraints;
};

} // namespace mlir::kina

#endif // KINA_AUTOSHARD_MILP_H
