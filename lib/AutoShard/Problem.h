//===- Problem.h - Automatic sharding as choices and their costs -*- C++ -*-===//
//
// The search space of one mesh-placed function (after reverse mode and
// inlining: one block of ops), as decisions and costs that the MILP
// (Solve.cpp) and the exhaustive enumeration that checks it read alike:
//
// - a node per decision: a parameter's placement, an op's strategy;
// - a demand per conversion a choice needs: value v must be available as
//   placement t when node n takes choice k (or always: a result's declared
//   placement, an ascription); one conversion of v to t serves every
//   demand for it, as the rewrite (Apply.cpp) reuses it;
// - a conversion's cost: the collectives convertPlacement builds for it,
//   their bytes per device as bytesSentPerDevice counts them (the formula
//   of m.cost and the simulator);
// - an op's compute time under a strategy: max(FLOPs of its blocks /
//   FLOP rate, bytes of its blocks / memory bandwidth);
// - per program point, the bytes of the values live there.
//
//===----------------------------------------------------------------------===//

#ifndef KINA_LIB_AUTOSHARD_PROBLEM_H
#define KINA_LIB_AUTOSHARD_PROBLEM_H

#include "Kina/AutoShard/AutoShard.h"
#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::kina::autoshard {

/// What a conversion of one placement into another costs: its
/// collectives that move data, by kind (kCollectiveKinds).
struct Conversion {
  bool possible = true;
  int64_t bytes[kNumCollectiveKinds] = {}; // per device
  int64_t count[kNumCollectiveKinds] = {};
  int64_t totalBytes() const;
  int64_t collectives() const;
  /// Seconds under `machine`.
  double seconds(const MachineModel &machine) const;
};

struct Node {
  std::string name;                 // "parameter 'w'", "kina.matmul at f:3:7"
  Operation *op = nullptr;          // null for a parameter
  int64_t argument = -1;            // the parameter's index
  SmallVector<PlacementAttr> results;                 // per choice
  SmallVector<SmallVector<PlacementAttr>> operands;   // per choice (ops)
  SmallVector<double> compute;      // per choice: seconds
  SmallVector<std::string> text;    // per choice
};

/// Parameter `i`'s name as the program writes it, or "#i" without one.
std::string parameterName(func::FuncOp fn, unsigned i);

struct Demand {
  Value value;
  PlacementAttr target;
  int node = -1; // -1: always
  int choice = -1;
  int operand = -1; // the operand of node's op that is `value`
  /// The program point the rewrite converts the value at, for the op or
  /// the return that needs it; -1 for an ascription, whose result is a
  /// value of the program already (and is counted as one).
  int64_t point = -1;
};

class Problem {
public:
  /// The search space of `fn` under `options`; fails with an error at
  /// the op it cannot place.
  static FailureOr<Problem> build(func::FuncOp fn, MeshOp mesh,
                                  const AutoShardOptions &options);

  std::vector<Node> nodes;
  std::vector<Demand> demands;
  /// Values returned as `@auto`: made whole (partial sums reduced).
  std::vector<Value> madeWhole;
  /// Each value an op defines and the program points (after each op,
  /// from 0) it is live at: from its definition to its last use, to the
  /// end when returned. Parameters are live at every point.
  struct Lifetime {
    Value value;
    int64_t from = 0, to = 0;
  };
  std::vector<Lifetime> lifetimes;
  int64_t numPoints = 0;
  /// The values live at `point` (parameters first).
  SmallVector<Value> liveAt(int64_t point) const;
  /// The points a conversion's result is held over: from the first that
  /// needs it to the last.
  struct Span {
    int64_t from = 0, to = -1;
  };
  /// Each value's deciding node, or its fixed placement.
  DenseMap<Value, int> nodeOf;
  DenseMap<Value, PlacementAttr> fixed;
  /// Each node's group: the first node of the repeated layers' nodes it
  /// shares its decision with (itself when untied; Repeats.cpp).
  std::vector<int> groupOf;
  /// How many decisions there are once tied.
  int64_t numGroups() const;

  /// A value's placement under `choices` (one per node).
  PlacementAttr placementOf(Value value, ArrayRef<int> choices) const;
  /// The placements a value can take, each with the choices that give it.
  SmallVector<std::pair<PlacementAttr, SmallVector<int>>>
  candidates(Value value) const;
  /// The cost of converting a value of `value`'s type from `from` to `to`.
  const Conversion &conversion(Value value, PlacementAttr from,
                               PlacementAttr to);
  /// A conversion's cost in the objective's unit: nanoseconds (seconds
  /// are too small for CBC's tolerances to tell plans apart) or bytes.
  double price(const Conversion &conversion) const;
  /// An op's compute seconds in the objective's unit (none for bytes).
  double computePrice(double seconds) const {
    return options.objective == AutoShardOptions::Objective::Time
               ? seconds * kNanosecondsPerSecond
               : 0;
  }
  static constexpr double kNanosecondsPerSecond = 1e9;
  /// The bytes one device holds of `value` placed `placement`.
  int64_t blockBytes(Value value, PlacementAttr placement) const;
  /// What a complete assignment costs: the objective, the bytes each
  /// device sends, the predicted seconds, the peak bytes; infeasible when
  /// a conversion is not possible or a point is over the budget.
  struct Evaluation {
    bool feasible = true;
    double objective = 0, seconds = 0;
    int64_t bytes = 0, peakBytes = 0, collectives = 0;
  };
  Evaluation evaluate(ArrayRef<int> choices);

  MeshOp mesh;
  AutoShardOptions options;
  func::FuncOp function;

private:
  /// Ties the nodes of repeated layers (fills groupOf).
  void tieRepeatedLayers();
  /// (type with the source placement, target) -> cost, made by building
  /// the collectives in a scratch block and erasing them.
  std::map<std::pair<const void *, const void *>, Conversion> conversions;
};

} // namespace mlir::kina::autoshard

#endif // KINA_LIB_AUTOSHARD_PROBLEM_H
