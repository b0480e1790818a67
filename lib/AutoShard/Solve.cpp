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
// rewrite converts once. Where one use alone needs v at t, z would equal
// its e[p,t]: the price is on that e, and there is no z (a 2 x 2 GPT
// block's forward: 46,000 variables and 28,000 rows -> 28,700 and 9,700,
// solved in 2.3 s instead of 19-23). Under a budget, each conversion's
// result is held from the first use that needs it to the last: per point
// where a use may need it, a prefix a and a suffix b at least that use's
// e[p,t] (p != t), and l >= a + b - 1 counted by the rows in between.
//
//===----------------------------------------------------------------------===//

#include "Solve.h"

#include "Apply.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::kina;
using namespace mlir::kina::autoshard;


Formulation::Formulation(Problem &problem) : problem(problem) {
  // One set of columns per group of tied nodes, priced for each member.
  s.resize(problem.nodes.size());
  for (auto [n, node] : llvm::enumerate(problem.nodes)) {
    int group = problem.groupOf[n];
    if (group != static_cast<int>(n)) {
      s[n] = s[group];
      for (auto [k, column] : llvm::enumerate(s[n]))
        milp.addCost(column, problem.computePrice(node.compute[k]));
      continue;
    }
    std::vector<std::pair<int, double>> one;
    for (auto [k, text] : llvm::enumerate(node.text)) {
      s[n].push_back(milp.addBinary(
          "s" + std::to_string(n) + "_" + std::to_string(k),
          problem.computePrice(node.compute[k])));
      one.push_back({s[n].back(), 1});
    }
    milp.addConstraint("one" + std::to_string(n), std::move(one),
                       Milp::Sense::Equal, 1);
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

  // Each value's uses: by a group's op (the group and the operand), with
  // the columns of the choices that need each target; and its pins,
  // needed always.
  using Use = std::pair<int, int>;
  struct Uses {
    llvm::MapVector<Use, llvm::MapVector<Attribute, llvm::SetVector<int>>>
        needs;
    llvm::SetVector<Attribute> pins;
  };
  llvm::MapVector<Value, Uses> usesOf;
  for (const Demand &demand : problem.demands) {
    Uses &uses = usesOf[demand.value];
    if (demand.node < 0)
      uses.pins.insert(demand.target);
    else
      uses.needs[{problem.groupOf[demand.node], demand.operand}]
                [demand.target]
                    .insert(s[demand.node][demand.choice]);
  }
  // A class: values decided by one group whose uses are the same groups'
  // (a layer's value and the next layer's). Its members' edge and
  // conversion variables would be the same, so they are one set, priced
  // for each member.
  struct ValueClass {
    Value representative;
    int members = 0;
  };
  std::vector<ValueClass> classes;
  std::map<std::vector<intptr_t>, int> classOfKey;
  DenseMap<Value, int> classOf;
  for (auto &[value, uses] : usesOf) {
    std::vector<intptr_t> key;
    auto node = problem.nodeOf.find(value);
    if (node == problem.nodeOf.end())
      key = {-1, reinterpret_cast<intptr_t>(value.getAsOpaquePointer())};
    else
      key = {problem.groupOf[node->second]};
    SmallVector<Use> used(uses.needs.keys());
    llvm::sort(used);
    for (auto [group, operand] : used)
      key.insert(key.end(), {group, operand});
    key.push_back(-2);
    SmallVector<intptr_t> pinned;
    for (Attribute pin : uses.pins)
      pinned.push_back(reinterpret_cast<intptr_t>(pin.getAsOpaquePointer()));
    llvm::sort(pinned);
    key.insert(key.end(), pinned.begin(), pinned.end());
    auto [it, added] = classOfKey.try_emplace(key, classes.size());
    if (added)
      classes.push_back({value, 0});
    ++classes[it->second].members;
    classOf[value] = it->second;
  }
  // Per class, use and target: the e columns whose sum says that this
  // use needs the class's values converted to the target (from another
  // placement); the budget holds the conversion's result from the first
  // such use to the last.
  using UseTarget = std::tuple<int, int, const void *>;
  std::vector<std::map<UseTarget, std::vector<int>>> needColumns(
      classes.size());

  // z[c,p,t]: class c's values are converted from p to t (once each,
  // whatever needs it).
  std::map<std::tuple<int, const void *, const void *>, int> converted;
  auto conversionColumn = [&](int c, PlacementAttr p,
                              PlacementAttr t) -> std::optional<int> {
    const Conversion &conversion =
        problem.conversion(classes[c].representative, p, t);
    if (!conversion.possible)
      return std::nullopt;
    auto key =
        std::make_tuple(c, p.getAsOpaquePointer(), t.getAsOpaquePointer());
    auto it = converted.find(key);
    if (it != converted.end())
      return it->second;
    int z = milp.addVariable("z", 0, 1,
                             classes[c].members * problem.price(conversion),
                             /*integer=*/false);
    return converted[key] = z;
  };
  for (auto [c, valueClass] : llvm::enumerate(classes)) {
    Value value = valueClass.representative;
    const Uses &uses = usesOf.find(value)->second;
    bool fixed = !problem.nodeOf.count(value);
    SmallVector<std::pair<PlacementAttr, SmallVector<int>>> candidates =
        problem.candidates(value);
    // The uses that need each target: a conversion only one use needs
    // is priced on that use's e (z would equal it), without a z.
    DenseMap<Attribute, int> usesOfTarget;
    for (auto &[use, needs] : uses.needs)
      for (auto &[target, columns] : needs)
        ++usesOfTarget[target];
    for (Attribute pin : uses.pins)
      ++usesOfTarget[pin];
    for (auto &[use, needs] : uses.needs) {
      // e[p,q]: v placed p, the group's choice needs q; its marginals
      // are x[v,p] and the group's choices that need q.
      SmallVector<std::vector<std::pair<int, double>>> atTarget(needs.size());
      for (auto &[p, choices] : candidates) {
        std::vector<std::pair<int, double>> fromP;
        for (auto [q, entry] : llvm::enumerate(needs)) {
          auto target = cast<PlacementAttr>(entry.first);
          const Conversion &conversion = problem.conversion(value, p, target);
          if (!conversion.possible)
            continue; // never at p where it is needed at q
          bool shared = p != target && usesOfTarget.lookup(target) > 1;
          int e = milp.addVariable(
              "e", 0, 1,
              shared ? 0 : valueClass.members * problem.price(conversion),
              /*integer=*/false);
          fromP.push_back({e, 1});
          atTarget[q].push_back({e, 1});
          if (shared)
            milp.addConstraint("pay",
                               {{*conversionColumn(c, p, target), 1}, {e, -1}},
                               Milp::Sense::GreaterEqual, 0);
          if (p != target)
            needColumns[c][{use.first, use.second,
                            target.getAsOpaquePointer()}]
                .push_back(e);
        }
        // sum_q e[p,q] = x[v,p]
        for (auto [column, one] : placedBy(value, choices))
          fromP.push_back({column, -1});
        milp.addConstraint("from", std::move(fromP), Milp::Sense::Equal,
                           fixed ? 1 : 0);
      }
      // sum_p e[p,q] = the choices that need q
      for (auto [q, entry] : llvm::enumerate(needs)) {
        std::vector<std::pair<int, double>> terms = atTarget[q];
        for (int column : entry.second)
          terms.push_back({column, -1});
        milp.addConstraint("to", std::move(terms), Milp::Sense::Equal, 0);
      }
    }
    for (Attribute pin : uses.pins)
      for (auto &[p, choices] : candidates) {
        auto t = cast<PlacementAttr>(pin);
        std::optional<int> z = conversionColumn(c, p, t);
        std::vector<std::pair<int, double>> x = placedBy(value, choices);
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
  // there, the results of the conversions whose span covers it, and at
  // the last point the results returned @auto made whole (as
  // Problem::evaluate counts them).
  std::set<std::pair<std::vector<std::pair<int, double>>, double>> budgetRows;
  std::vector<std::vector<std::pair<int, double>>> conversionLive;
  if (problem.options.budgetBytes > 0)
    conversionLive = conversionsLive(
        [&](const Demand &demand) -> std::vector<std::pair<int, double>> {
          auto target = cast<PlacementAttr>(demand.target);
          if (demand.node >= 0) {
            std::vector<std::pair<int, double>> terms;
            int c = classOf.lookup(demand.value);
            for (int e : needColumns[c][{problem.groupOf[demand.node],
                                         demand.operand,
                                         target.getAsOpaquePointer()}])
              terms.push_back({e, 1});
            return terms;
          }
          // A declared result: converted wherever the value is not at it
          // (always, for a fixed value elsewhere: kAlways).
          std::vector<std::pair<int, double>> terms;
          for (auto &[p, choices] : problem.candidates(demand.value)) {
            if (p == target)
              continue;
            if (choices.empty())
              return {{kAlways, 1}};
            for (auto term : placedBy(demand.value, choices))
              terms.push_back(term);
          }
          return terms;
        });
  if (problem.options.budgetBytes > 0)
    for (int64_t i = 0; i < problem.numPoints; ++i) {
      SmallVector<Value> live = problem.liveAt(i);
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
      for (auto [column, b] : conversionLive[i])
        bytes[column] += b;
      if (i == problem.numPoints - 1)
        for (Value value : problem.madeWhole)
          for (auto [p, choices] : problem.candidates(value)) {
            if (whole(p) == p)
              continue;
            double b = static_cast<double>(problem.blockBytes(value, whole(p)));
            if (!problem.nodeOf.count(value))
              held += b;
            for (auto [column, one] : placedBy(value, choices))
              bytes[column] += b;
          }
      std::vector<std::pair<int, double>> terms(bytes.begin(), bytes.end());
      // Tied layers make many points alike: one row each.
      if (!budgetRows.insert({terms, held}).second)
        continue;
      milp.addConstraint("budget" + std::to_string(i), std::move(terms),
                         Milp::Sense::LessEqual,
                         static_cast<double>(problem.options.budgetBytes) -
                             held);
    }

}

std::vector<std::vector<std::pair<int, double>>> Formulation::conversionsLive(
    llvm::function_ref<std::vector<std::pair<int, double>>(const Demand &)>
        need) {
  std::vector<std::vector<std::pair<int, double>>> live(problem.numPoints);
  // The demands with a point, by conversion and point.
  llvm::MapVector<std::pair<Value, Attribute>,
                  std::map<int64_t, SmallVector<const Demand *>>>
      demandsAt;
  for (const Demand &demand : problem.demands)
    if (demand.point >= 0)
      demandsAt[{demand.value, demand.target}][demand.point].push_back(
          &demand);
  auto atLeast = [&](int column, std::vector<std::pair<int, double>> terms) {
    for (auto [term, one] : terms)
      if (term == kAlways) {
        milp.setBounds(column, 1, 1);
        return;
      }
    for (auto &term : terms)
      term.second = -1;
    terms.push_back({column, 1});
    milp.addConstraint("needed", std::move(terms), Milp::Sense::GreaterEqual,
                       0);
  };
  for (auto &[key, points] : demandsAt) {
    // a[j]: a demand at or before the j-th point needs the conversion;
    // b[j]: one at or after it.
    SmallVector<int64_t> where;
    SmallVector<int> a, b;
    for (auto &[point, demands] : points) {
      where.push_back(point);
      a.push_back(milp.addVariable("a", 0, 1, 0, /*integer=*/false));
      b.push_back(milp.addVariable("b", 0, 1, 0, /*integer=*/false));
      std::set<std::vector<std::pair<int, double>>> needs;
      for (const Demand *demand : demands)
        needs.insert(need(*demand));
      for (const auto &terms : needs) {
        atLeast(a.back(), terms);
        atLeast(b.back(), terms);
      }
    }
    for (size_t j = 1; j < where.size(); ++j) {
      milp.addConstraint("before", {{a[j], 1}, {a[j - 1], -1}},
                         Milp::Sense::GreaterEqual, 0);
      milp.addConstraint("after", {{b[j - 1], 1}, {b[j], -1}},
                         Milp::Sense::GreaterEqual, 0);
    }
    // Held at a point from the first need to the last: l >= a + b - 1,
    // at each demand's point (a[j], b[j]) and between two (a[j], b[j+1]).
    double bytes = static_cast<double>(problem.blockBytes(
        key.first, cast<PlacementAttr>(key.second)));
    auto held = [&](int from, int to) {
      int l = milp.addVariable("l", 0, 1, 0, /*integer=*/false);
      milp.addConstraint("held", {{l, 1}, {a[from], -1}, {b[to], -1}},
                         Milp::Sense::GreaterEqual, -1);
      return l;
    };
    for (size_t j = 0; j < where.size(); ++j) {
      live[where[j]].push_back({held(j, j), bytes});
      if (j + 1 == where.size() || where[j + 1] == where[j] + 1)
        continue;
      int between = held(j, j + 1);
      for (int64_t i = where[j] + 1; i < where[j + 1]; ++i)
        live[i].push_back({between, bytes});
    }
  }
  return live;
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
  // The groups' choices, as the solver ties them.
  SmallVector<int> groups;
  int64_t count = 1;
  for (auto [n, node] : llvm::enumerate(problem.nodes)) {
    if (problem.groupOf[n] != static_cast<int>(n))
      continue;
    groups.push_back(n);
    count *= static_cast<int64_t>(node.results.size());
    if (count > limit)
      return std::nullopt;
  }
  SmallVector<int> choices(problem.nodes.size(), 0);
  double best = INFINITY;
  for (int64_t i = 0; i < count; ++i) {
    for (auto [n, group] : llvm::enumerate(problem.groupOf))
      choices[n] = choices[group];
    Problem::Evaluation evaluation = problem.evaluate(choices);
    if (evaluation.feasible)
      best = std::min(best, evaluation.objective);
    for (int n : groups) {
      if (++choices[n] < static_cast<int>(problem.nodes[n].results.size()))
        break;
      choices[n] = 0;
    }
  }
  return std::make_pair(count, best);
}
