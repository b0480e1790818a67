//===- Milp.cpp - A mixed-integer linear program, solved by CBC -----------===//
//
// Built column by column and row by row through CBC's C interface
// (Cbc_C_Interface.h), which Debian's coinor-libcbc-dev ships and keeps
// ABI-stable; the C++ classes behind it change between releases.
//
//===----------------------------------------------------------------------===//

#include "Kina/AutoShard/Milp.h"

#include <coin/Cbc_C_Interface.h>

#include <algorithm>
#include <cassert>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>

using namespace mlir::kina;

int Milp::addVariable(std::string name, double lower, double upper,
                      double cost, bool integer) {
  variables.push_back({std::move(name), lower, upper, cost, integer});
  return numVariables() - 1;
}

void Milp::addConstraint(std::string name,
                         std::vector<std::pair<int, double>> terms,
                         Sense sense, double rhs) {
  for ([[maybe_unused]] auto &[variable, coefficient] : terms)
    assert(variable >= 0 && variable < numVariables() &&
           "a constraint on a variable not added");
  // A column named twice (tied decisions) is one entry of the row.
  std::sort(terms.begin(), terms.end(),
            [](auto &a, auto &b) { return a.first < b.first; });
  std::vector<std::pair<int, double>> merged;
  for (auto &[variable, coefficient] : terms) {
    if (!merged.empty() && merged.back().first == variable)
      merged.back().second += coefficient;
    else
      merged.push_back({variable, coefficient});
  }
  constraints.push_back({std::move(name), std::move(merged), sense, rhs});
}

double Milp::Result::gap() const {
  if (!hasSolution())
    return INFINITY;
  return std::max(0.0, objective - bound) /
         std::max(std::fabs(objective), 1e-9);
}

Milp::Result Milp::solve(const Options &options) const {
  std::unique_ptr<Cbc_Model, void (*)(Cbc_Model *)> model(Cbc_newModel(),
                                                          Cbc_deleteModel);
  Cbc_Model *m = model.get();
  // Silent and on one thread: the same program, the same plan.
  Cbc_setLogLevel(m, 0);
  Cbc_setParameter(m, "threads", "1");
  Cbc_setParameter(m, "randomCbcSeed", "1");
  Cbc_setMaximumSeconds(m, options.secondsLimit);
  Cbc_setAllowableFractionGap(m, options.relativeGap);
  Cbc_setAllowableGap(m, 0);
  // Loaded whole, column by column (CSC): adding rows one at a time
  // rebuilds CBC's matrix each time (20 s for a GPT step's 25,000 rows).
  int columns = numVariables();
  std::vector<std::vector<std::pair<int, double>>> byColumn(columns);
  std::vector<double> rowLower, rowUpper;
  for (int row = 0; row < numConstraints(); ++row) {
    const Constraint &c = constraints[row];
    for (auto &[variable, coefficient] : c.terms)
      byColumn[variable].push_back({row, coefficient});
    // CLP's infinity is DBL_MAX (COIN_DBL_MAX).
    rowLower.push_back(c.sense == Sense::LessEqual ? -DBL_MAX : c.rhs);
    rowUpper.push_back(c.sense == Sense::GreaterEqual ? DBL_MAX : c.rhs);
  }
  std::vector<CoinBigIndex> start = {0};
  std::vector<int> index;
  std::vector<double> value, lower, upper, cost;
  for (int j = 0; j < columns; ++j) {
    for (auto &[row, coefficient] : byColumn[j]) {
      index.push_back(row);
      value.push_back(coefficient);
    }
    start.push_back(static_cast<CoinBigIndex>(index.size()));
    lower.push_back(variables[j].lower);
    upper.push_back(variables[j].upper);
    cost.push_back(variables[j].cost);
  }
  Cbc_loadProblem(m, columns, numConstraints(), start.data(), index.data(),
                  value.data(), lower.data(), upper.data(), cost.data(),
                  rowLower.data(), rowUpper.data());
  for (int j = 0; j < columns; ++j)
    if (variables[j].integer)
      Cbc_setInteger(m, j);
  if (!options.cuts)
    Cbc_setParameter(m, "cuts", "off");
  if (options.maxNodes >= 0)
    Cbc_setMaximumNodes(m, options.maxNodes);
  if (!options.start.empty()) {
    std::vector<int> integers;
    std::vector<double> values;
    for (int j = 0; j < columns; ++j)
      if (variables[j].integer) {
        integers.push_back(j);
        values.push_back(options.start[j]);
      }
    Cbc_setMIPStartI(m, static_cast<int>(integers.size()), integers.data(),
                     values.data());
  }
  Result result;
  auto began = std::chrono::steady_clock::now();
  Cbc_solve(m);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began)
          .count();
  if (Cbc_isProvenInfeasible(m)) {
    result.status = Result::Status::Infeasible;
    return result;
  }
  const double *solution = Cbc_getColSolution(m);
  // Without an incumbent (stopped before finding one) CBC's solution
  // array is not a solution.
  if (!solution || Cbc_getObjValue(m) >= 1e50) {
    result.status = Result::Status::NoSolution;
    return result;
  }
  result.values.assign(solution, solution + numVariables());
  for (int j = 0; j < numVariables(); ++j)
    if (variables[j].integer)
      result.values[j] = std::round(result.values[j]);
  result.objective = Cbc_getObjValue(m);
  result.bound = std::min(Cbc_getBestPossibleObjValue(m), result.objective);
  // Optimal: proven so within the gap asked for (0 by default); the
  // bound says how far from optimal the solution may be.
  result.status = Cbc_isProvenOptimal(m) ? Result::Status::Optimal
                                         : Result::Status::Feasible;
  return result;
}
