//===- MilpTest.cpp - The solver against enumeration ----------------------===//
//
// Problems shaped as the sharding search's: each node picks one of K
// strategies (binary x[n][k], one per node), a cost per pick, a cost per
// pair of picks on an edge (a reshard: y >= x[u][k] + x[v][l] - 1), and a
// memory budget over the picks. CBC's optimum must equal the best of every
// assignment, enumerated.
//
//===----------------------------------------------------------------------===//

#include "Kina/AutoShard/Milp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using mlir::kina::Milp;

namespace {
struct Problem {
  int nodes, choices;
  std::vector<std::vector<double>> pick;   // [node][choice]
  std::vector<std::vector<double>> memory; // [node][choice]
  struct Edge {
    int from, to;
    std::vector<std::vector<double>> cost; // [from's choice][to's choice]
  };
  std::vector<Edge> edges;
  double budget;
};

Problem randomProblem(unsigned seed, int nodes, int choices) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> small(0, 20), big(0, 60);
  Problem p{nodes, choices, {}, {}, {}, 0};
  double most = 0;
  for (int n = 0; n < nodes; ++n) {
    p.pick.emplace_back();
    p.memory.emplace_back();
    for (int k = 0; k < choices; ++k) {
      p.pick.back().push_back(small(random));
      p.memory.back().push_back(small(random));
    }
    most += *std::max_element(p.memory.back().begin(), p.memory.back().end());
  }
  // A chain and a few skips, as a layer's ops and its residual.
  for (int n = 0; n + 1 < nodes; ++n)
    p.edges.push_back({n, n + 1, {}});
  for (int n = 0; n + 3 < nodes; n += 2)
    p.edges.push_back({n, n + 3, {}});
  for (Problem::Edge &e : p.edges)
    for (int k = 0; k < choices; ++k) {
      e.cost.emplace_back();
      for (int l = 0; l < choices; ++l)
        e.cost.back().push_back(k == l ? 0 : big(random));
    }
  p.budget = std::floor(most * 0.6);
  return p;
}

/// The best cost over every assignment within the budget (infinity when
/// none fits).
double enumerate(const Problem &p) {
  std::vector<int> at(p.nodes, 0);
  double best = std::numeric_limits<double>::infinity();
  while (true) {
    double cost = 0, memory = 0;
    for (int n = 0; n < p.nodes; ++n) {
      cost += p.pick[n][at[n]];
      memory += p.memory[n][at[n]];
    }
    for (const Problem::Edge &e : p.edges)
      cost += e.cost[at[e.from]][at[e.to]];
    if (memory <= p.budget)
      best = std::min(best, cost);
    int n = 0;
    while (n < p.nodes && ++at[n] == p.choices)
      at[n++] = 0;
    if (n == p.nodes)
      return best;
  }
}

/// The problem as a MILP; x[n][k] by index.
Milp pose(const Problem &p, std::vector<std::vector<int>> &x) {
  Milp milp;
  x.assign(p.nodes, {});
  std::vector<std::pair<int, double>> memory;
  for (int n = 0; n < p.nodes; ++n) {
    std::vector<std::pair<int, double>> one;
    for (int k = 0; k < p.choices; ++k) {
      int j = milp.addBinary("x_" + std::to_string(n) + "_" +
                                 std::to_string(k),
                             p.pick[n][k]);
      x[n].push_back(j);
      one.push_back({j, 1});
      memory.push_back({j, p.memory[n][k]});
    }
    milp.addConstraint("one_" + std::to_string(n), one, Milp::Sense::Equal,
                       1);
  }
  for (const Problem::Edge &e : p.edges)
    for (int k = 0; k < p.choices; ++k)
      for (int l = 0; l < p.choices; ++l) {
        if (e.cost[k][l] == 0)
          continue;
        int y = milp.addVariable("y", 0, 1, e.cost[k][l], /*integer=*/false);
        milp.addConstraint("pair", {{y, 1}, {x[e.from][k], -1},
                                    {x[e.to][l], -1}},
                           Milp::Sense::GreaterEqual, -1);
      }
  milp.addConstraint("budget", memory, Milp::Sense::LessEqual, p.budget);
  return milp;
}

TEST(Milp, FindsTheEnumeratedOptimum) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    Problem p = randomProblem(seed, 6, 3);
    double best = enumerate(p);
    std::vector<std::vector<int>> x;
    Milp::Result result = pose(p, x).solve();
    if (std::isinf(best)) {
      EXPECT_EQ(result.status, Milp::Result::Status::Infeasible) << seed;
      continue;
    }
    ASSERT_EQ(result.status, Milp::Result::Status::Optimal) << seed;
    EXPECT_NEAR(result.objective, best, 1e-6) << seed;
    EXPECT_LE(result.bound, result.objective + 1e-6) << seed;
    EXPECT_NEAR(result.gap(), 0, 1e-6) << seed;
    // The solution is one pick per node, and it fits.
    double memory = 0;
    for (int n = 0; n < p.nodes; ++n) {
      int picked = 0;
      for (int k = 0; k < p.choices; ++k)
        if (result.values[x[n][k]] == 1) {
          ++picked;
          memory += p.memory[n][k];
        }
      EXPECT_EQ(picked, 1) << seed << " node " << n;
    }
    EXPECT_LE(memory, p.budget) << seed;
  }
}

TEST(Milp, SameProgramSameSolution) {
  Problem p = randomProblem(7, 7, 3);
  std::vector<std::vector<int>> x;
  Milp milp = pose(p, x);
  Milp::Result first = milp.solve(), second = milp.solve();
  ASSERT_TRUE(first.hasSolution());
  EXPECT_EQ(first.values, second.values);
  EXPECT_EQ(first.objective, second.objective);
}

TEST(Milp, NamesAnInfeasibleBudget) {
  Problem p = randomProblem(3, 4, 2);
  p.budget = -1; // nothing fits
  std::vector<std::vector<int>> x;
  Milp::Result result = pose(p, x).solve();
  EXPECT_EQ(result.status, Milp::Result::Status::Infeasible);
  EXPECT_FALSE(result.hasSolution());
}

TEST(Milp, ContinuousVariablesAndBounds) {
  // min -x - 2y, x + y <= 4, x <= 3 (bound), y integer <= 2.5 -> y = 2,
  // x = 2: -6.
  Milp milp;
  int x = milp.addVariable("x", 0, 3, -1, /*integer=*/false);
  int y = milp.addVariable("y", 0, 10, -2, /*integer=*/true);
  milp.addConstraint("sum", {{x, 1}, {y, 1}}, Milp::Sense::LessEqual, 4);
  milp.addConstraint("y", {{y, 1}}, Milp::Sense::LessEqual, 2.5);
  Milp::Result result = milp.solve();
  ASSERT_EQ(result.status, Milp::Result::Status::Optimal);
  EXPECT_NEAR(result.objective, -6, 1e-9);
  EXPECT_NEAR(result.values[x], 2, 1e-9);
  EXPECT_EQ(result.values[y], 2);
}
} // namespace
