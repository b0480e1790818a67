//===- Solve.cpp - The search space as a MILP, and by enumeration ---------===//
//
// s[n,k] binary: node n takes choice k, one per node; x[v,p], the sum of
// the s that place value v at p (1 for a fixed value). Each use of v by a
// node (an edge) has e[p,q] in [0, 1] whose marginals are x[v,p] and the
// node's choices that need v at q: with s integral, the one cell at (v's
// placement, the target needed) is 1, without binaries, and the LP
// relaxation is the tight one of a pairwise model (integral on trees),
// not XLA's e >= x_u + s_i - 1. z[v,p,t] in [0, 1], priced as the
// conversion from p to t, is at least every edge's e[p,t] and every pin's
// x[v,p]: a conversion is paid once, however many uses need it, as the
// rewrite converts once.
//
//===----------------------------------------------------------------------===//

#include "Solve.h"

#include "Apply.h"

#include <map>

using namespace mlir;
using namespace mlir::kina;
using namespace mlir::kina::autoshard;


Formulation::Formulation(Problem &problem) : problem(problem) {
  for (auto [n, node] : llvm::enumerate(problem.nodes)) {
    SmallVector<int> columns;
    std::vector<std::pair<int, double>> one;
    for (auto [k, text] : llvm::enumerate(node.text)) {
      columns.push_back(milp.addBinary(
          "s" + std::to_string(n) + "_" + std::to_string(k),
          problem.computePrice(node.compute[k])));
      one.push_back({columns.back(), 1});
    }
    milp.addConstraint("one" + std::to_string(n), std::move(one),
                       Milp::Sense::Equal, 1);
    s.push_back(std::move(columns));
  }
  // The s columns that place `value` at each of its candidates; empty for
  // a fixed value (x = 1).
  auto placedBy = [&](Value value, ArrayRef<int> choices) {
    std::vector<std::pair<int, double>> terms;
    int node = problem.nodeOf.lookup(value);
    for (int k : choices)
      terms.push_back({s[node][k], 1});
    return terms;
  };

  // The edges: each use of a value by a node (an operand of an op, the
  // parameter a result is written into), with the target each of the
  // node's choices needs; and the pins, needed always.
  using EdgeKey = std::tuple<Value, int, int>;
  llvm::MapVector<EdgeKey, SmallVector<const Demand *>> edges;
  llvm::SetVector<std::pair<Value, Attribute>> pins;
  for (const Demand &demand : problem.demands) {
    if (demand.node < 0)
      pins.insert({demand.value, demand.target});
    else
      edges[{demand.value, demand.node, demand.operand}].push_back(&demand);
  }
  // z[v,p,t]: v is converted from p to t (once, whatever needs it).
  std::map<std::tuple<void *, const void *, const void *>, int> converted;
  auto conversionColumn = [&](Value value, PlacementAttr p,
                              PlacementAttr t) -> std::optional<int> {
    const Conversion &conversion = problem.conversion(value, p, t);
    if (!conversion.possible)
      return std::nullopt;
    auto key = std::make_tuple(value.getAsOpaquePointer(),
                               p.getAsOpaquePointer(), t.getAsOpaquePointer());
    auto it = converted.find(key);
    if (it != converted.end())
      return it->second;
    int z = milp.addVariable("z", 0, 1, problem.price(conversion),
                             /*integer=*/false);
    return converted[key] = z;
  };
  for (auto &[key, demands] : edges) {
    Value value = std::get<0>(key);
    // e[p,q]: v placed p, the node's choice needs q; its marginals are
    // x[v,p] and the node's choices that need q.
    llvm::MapVector<Attribute, std::vector<std::pair<int, double>>> needs;
    for (const Demand *demand : demands)
      needs[demand->target].push_back({s[demand->node][demand->choice], -1});
    SmallVector<std::pair<PlacementAttr, SmallVector<int>>> candidates =
        problem.candidates(value);
    SmallVector<std::vector<std::pair<int, double>>> atTarget(needs.size());
    for (auto &[p, choices] : candidates) {
      std::vector<std::pair<int, double>> fromP;
      for (auto [q, entry] : llvm::enumerate(needs)) {
        auto target = cast<PlacementAttr>(entry.first);
        std::optional<int> z = conversionColumn(value, p, target);
        if (!z)
          continue; // never at p where it is needed at q
        int e = milp.addVariable("e", 0, 1, 0, /*integer=*/false);
        fromP.push_back({e, 1});
        atTarget[q].push_back({e, 1});
        if (p != target)
          milp.addConstraint("pay", {{*z, 1}, {e, -1}},
                             Milp::Sense::GreaterEqual, 0);
      }
      // sum_q e[p,q] = x[v,p]
      for (auto [column, one] : placedBy(value, choices))
        fromP.push_back({column, -1});
      milp.addConstraint("from", std::move(fromP), Milp::Sense::Equal,
                         problem.nodeOf.count(value) ? 0 : 1);
    }
    // sum_p e[p,q] = the choices that need q
    for (auto [q, entry] : llvm::enumerate(needs)) {
      std::vector<std::pair<int, double>> terms = atTarget[q];
      terms.insert(terms.end(), entry.second.begin(), entry.second.end());
      milp.addConstraint("to", std::move(terms), Milp::Sense::Equal, 0);
    }
  }
  for (auto [value, target] : pins)
    for (auto &[p, choices] : problem.candidates(value)) {
      auto t = cast<PlacementAttr>(target);
      std::optional<int> z = conversionColumn(value, p, t);
      std::vector<std::pair<int, double>> x = placedBy(value, choices);
      bool fixed = !problem.nodeOf.count(value);
      if (!z) {
        // Never at p: a pin needs it at t.
        if (!fixed)
          milp.addConstraint("pin", std::move(x), Milp::Sense::Equal, 0);
        else
          milp.addConstraint("pin", {}, Milp::Sense::Equal, 1); // infeasible
        continue;
      }
      if (p == t)
        continue;
      // z >= x[v,p]
      std::vector<std::pair<int, double>> terms = {{*z, 1}};
      for (auto [column, one] : x)
        terms.push_back({column, -1});
      milp.addConstraint("pinned", std::move(terms),
                         Milp::Sense::GreaterEqual, fixed ? 1 : 0);
    }
  // Results returned @auto: their partial sums reduced, paid by the
  // choices that leave them partial.
  for (Value value : problem.madeWhole)
    for (auto [p, choices] : problem.candidates(value)) {
      double price = problem.price(problem.conversion(value, p, whole(p)));
      if (!problem.nodeOf.count(value))
        constant += price;
      for (auto [column, one] : placedBy(value, choices))
        milp.addCost(column, price);
    }
  // The budget: at every program point, the blocks of the values live
  // there.
  if (problem.options.budgetBytes > 0)
    for (auto [i, live] : llvm::enumerate(problem.livePoints)) {
      std::map<int, double> bytes;
      double held = 0;
      for (Value value : live)
        for (auto [p, choices] : problem.candidates(value)) {
          double b = static_cast<double>(problem.blockBytes(value, p));
          if (!problem.nodeOf.count(value))
            held += b;
          for (auto [column, one] : placedBy(value, choices))
            bytes[column] += b;
        }
      std::vector<std::pair<int, double>> terms(bytes.begin(), bytes.end());
      milp.addConstraint("budget" + std::to_string(i), std::move(terms),
                         Milp::Sense::LessEqual,
                         static_cast<double>(problem.options.budgetBytes) -
                             held);
    }

}

Milp::Options Formulation::defaultOptions() const {
  Milp::Options options;
  options.secondsLimit = problem.options.secondsLimit;
  return options;
}

Solution Formulation::solve(const Milp &program,
                            Milp::Options options) const {
  Solution solution;
  solution.result = program.solve(options);
  solution.variables = program.numVariables();
  solution.constraints = program.numConstraints();
  if (!solution.result.hasSolution())
    return solution;
  for (const SmallVector<int> &columns : s) {
    int chosen = 0;
    for (auto [k, column] : llvm::enumerate(columns))
      if (solution.result.values[column] > 0.5)
        chosen = k;
    solution.choices.push_back(chosen);
  }
  solution.objective = solution.result.objective + constant;
  solution.bound = solution.result.bound + constant;
  return solution;
}

/// The branch-and-bound nodes the tie-break may explore.
static constexpr int kTieNodes = 20;

Solution Formulation::breakTies(const Solution &best,
                                double tolerance) const {
  Milp ties = milp;
  // The objective at most the optimum's (less the constant terms).
  ties.addConstraint("optimum", milp.objectiveTerms(), Milp::Sense::LessEqual,
                     best.objective - constant + tolerance);
  ties.clearCosts();
  for (auto [n, node] : llvm::enumerate(problem.nodes)) {
    if (node.argument < 0)
      continue;
    Value arg = problem.function.getArgument(node.argument);
    for (auto [k, placement] : llvm::enumerate(node.results))
      ties.addCost(s[n][k],
                   static_cast<double>(problem.blockBytes(arg, placement)));
  }
  // From the optimum, and for a bounded number of nodes: the tie-break
  // must not cost more than the solve (a node limit, not seconds, so
  // that every machine breaks the tie alike).
  Milp::Options options = defaultOptions();
  options.start = best.result.values;
  options.maxNodes = kTieNodes;
  options.cuts = false;
  Solution tied = solve(ties, options);
  if (!tied.result.hasSolution())
    return best;
  // The optimum's objective and bound; the tie's choices.
  tied.result.status = best.result.status;
  tied.objective = best.objective;
  tied.bound = best.bound;
  tied.result.objective = best.result.objective;
  tied.result.bound = best.result.bound;
  return tied;
}

std::optional<std::pair<int64_t, double>>
mlir::kina::autoshard::enumerateAll(Problem &problem, int64_t limit) {
  int64_t count = 1;
  for (const Node &node : problem.nodes) {
    count *= static_cast<int64_t>(node.results.size());
    if (count > limit)
      return std::nullopt;
  }
  SmallVector<int> choices(problem.nodes.size(), 0);
  double best = INFINITY;
  for (int64_t i = 0; i < count; ++i) {
    Problem::Evaluation evaluation = problem.evaluate(choices);
    if (evaluation.feasible)
      best = std::min(best, evaluation.objective);
    for (size_t n = 0; n < choices.size(); ++n) {
      if (++choices[n] < static_cast<int>(problem.nodes[n].results.size()))
        break;
      choices[n] = 0;
    }
  }
  return std::make_pair(count, best);
}
