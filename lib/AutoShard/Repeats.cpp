//===- Repeats.cpp - Repeated layers share one decision -------------------===//
//
// A model's layers are the same ops on other weights, one after another:
// a GPT's blocks in the forward, their adjoints in reverse order, the
// optimizer's update of each layer's weights. Their ops share decisions
// (as XLA's auto-sharding and autoparallel tie repeated layers), so the
// solver sees about one layer's variables whatever the depth.
//
// Found from the op sequence alone: each op's signature is its name, its
// attributes, its types and, per operand, the op or the parameter type
// that makes it. A run of period P is a stretch where op i and op i + P
// have the same signature, but for at most kMaxGap ops in a row (a
// layer's first and last ops see the layers around it: the embedding
// before the first layer, the final norm after the last), with at least
// P / 2 matches; runs are taken the most matches first, and a run whose
// ops overlap one already taken is left out. Matched ops i and i + P are
// tied when their choices are the same, and so are the parameters they
// use in the same places.
//
//===----------------------------------------------------------------------===//

#include "Problem.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/Hashing.h"

#include <algorithm>
#include <tuple>

using namespace mlir;
using namespace mlir::kina;
using namespace mlir::kina::autoshard;

/// The fewest ops a repeated layer has: shorter repeats (two adds in a
/// row) are a layer's own ops, which must stay free to differ.
static constexpr int64_t kMinLayerOps = 8;
/// The most ops in a row a run may mismatch and go on.
static constexpr int64_t kMaxGap = 2;

static llvm::hash_code signature(Operation &op) {
  llvm::hash_code code = llvm::hash_combine(
      op.getName().getAsOpaquePointer(),
      op.getRawDictionaryAttrs().getAsOpaquePointer());
  for (Type type : op.getResultTypes())
    code = llvm::hash_combine(code, type.getAsOpaquePointer());
  for (Value operand : op.getOperands()) {
    Operation *producer = operand.getDefiningOp();
    code = llvm::hash_combine(
        code, operand.getType().getAsOpaquePointer(),
        producer ? producer->getName().getAsOpaquePointer() : nullptr);
  }
  return code;
}

/// Two ops a tie may join: the same op on the same types.
static bool sameOp(Operation *a, Operation *b) {
  return a->getName() == b->getName() &&
         a->getRawDictionaryAttrs() == b->getRawDictionaryAttrs() &&
         a->getResultTypes() == b->getResultTypes() &&
         a->getOperandTypes() == b->getOperandTypes();
}

static bool sameChoices(const Node &a, const Node &b) {
  return a.results == b.results && a.operands == b.operands;
}

namespace {
struct Run {
  int64_t period, first, last, matches; // first..last: where i ~ i + period
};
} // namespace

void Problem::tieRepeatedLayers() {
  SmallVector<Operation *> ops;
  for (Operation &op : function.getBody().front())
    if (!isa<func::ReturnOp>(op))
      ops.push_back(&op);
  int64_t n = ops.size();
  SmallVector<llvm::hash_code> signatures;
  for (Operation *op : ops)
    signatures.push_back(signature(*op));
  auto matches = [&](int64_t i, int64_t period) {
    return signatures[i] == signatures[i + period];
  };

  std::vector<Run> runs;
  for (int64_t period = kMinLayerOps; 2 * period <= n; ++period) {
    Run run{period, -1, -1, 0};
    auto close = [&] {
      if (2 * run.matches >= period)
        runs.push_back(run);
      run = {period, -1, -1, 0};
    };
    for (int64_t i = 0; i + period < n; ++i) {
      if (!matches(i, period)) {
        if (run.first >= 0 && i - run.last > kMaxGap)
          close();
        continue;
      }
      if (run.first < 0)
        run.first = i;
      run.last = i;
      ++run.matches;
    }
    if (run.first >= 0)
      close();
  }
  // The most matches first; a total order, so every run sorts alike.
  llvm::sort(runs, [](const Run &a, const Run &b) {
    return std::make_tuple(-a.matches, a.period, a.first) <
           std::make_tuple(-b.matches, b.period, b.first);
  });

  llvm::EquivalenceClasses<int> tied;
  auto tie = [&](Value a, Value b) {
    auto na = nodeOf.find(a), nb = nodeOf.find(b);
    if (na == nodeOf.end() || nb == nodeOf.end() || na->second == nb->second)
      return;
    if (sameChoices(nodes[na->second], nodes[nb->second]))
      tied.unionSets(na->second, nb->second);
  };
  std::vector<bool> taken(n, false);
  for (const Run &run : runs) {
    int64_t end = run.last + run.period + 1;
    if (std::any_of(taken.begin() + run.first, taken.begin() + end,
                    [](bool t) { return t; }))
      continue;
    std::fill(taken.begin() + run.first, taken.begin() + end, true);
    for (int64_t i = run.first; i <= run.last; ++i) {
      Operation *a = ops[i], *b = ops[i + run.period];
      if (!matches(i, run.period) || !sameOp(a, b))
        continue; // not the same op, or two signatures hashed alike
      tie(a->getResult(0), b->getResult(0));
      for (auto [x, y] : llvm::zip(a->getOperands(), b->getOperands()))
        if (isa<BlockArgument>(x) && isa<BlockArgument>(y))
          tie(x, y);
    }
  }
  groupOf.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    // The group's first node stands for it.
    int first = i;
    if (tied.contains(i))
      for (auto it = tied.findLeader(i); it != tied.member_end(); ++it)
        first = std::min(first, *it);
    groupOf[i] = first;
  }
}
