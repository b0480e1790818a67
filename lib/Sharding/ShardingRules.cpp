//===- ShardingRules.cpp - How each kina op can be split ------------------===//
#include "Kina/Sharding/ShardingRules.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kina;
using Kind = ShardingRule::Kind;

std::optional<int64_t> ShardingRule::resultDimOf(int64_t factor) const {
  for (auto [dim, f] : llvm::enumerate(resultDims))
    if (f == factor)
      return dim;
  return std::nullopt;
}

std::optional<int64_t> ShardingRule::operandDimOf(unsigned operand,
                                                  int64_t factor) const {
  for (auto [dim, f] : llvm::enumerate(operandDims[operand]))
    if (f == factor)
      return dim;
  return std::nullopt;
}

static int64_t rankOf(Value value) {
  return cast<KinaTensorType>(value.getType()).getRank();
}

/// Every dim of every operand is the result's dim of the same index.
static ShardingRule elementwise(Operation *op) {
  ShardingRule rule;
  int64_t rank = rankOf(op->getResult(0));
  rule.factors.assign(rank, Kind::Parallel);
  for (int64_t d = 0; d < rank; ++d)
    rule.resultDims.push_back(d);
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    rule.operandDims.push_back(rule.resultDims);
  return rule;
}

/// Like elementwise, with `axis` blocked.
static ShardingRule elementwiseBlocking(Operation *op, int64_t axis) {
  ShardingRule rule = elementwise(op);
  rule.factors[axis] = Kind::Blocked;
  return rule;
}

static ShardingRule broadcastRule(BroadcastOp op) {
  ShardingRule rule = elementwise(op);
  auto input = cast<KinaTensorType>(op.getInput().getType());
  auto result = cast<KinaTensorType>(op.getType());
  int64_t offset = result.getRank() - input.getRank();
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < input.getRank(); ++d)
    dims.push_back(
        input.getDimSize(d) == result.getDimSize(offset + d) ? offset + d : -1);
  rule.operandDims = {dims};
  return rule;
}

static ShardingRule transposeRule(TransposeOp op) {
  ShardingRule rule = elementwise(op);
  // result dim i is input dim perm[i]
  SmallVector<int64_t> dims(op.getPerm().size());
  for (auto [i, p] : llvm::enumerate(op.getPerm()))
    dims[p] = i;
  rule.operandDims = {dims};
  return rule;
}

/// [..., M, K] @ [..., K, N]: batch and M, N parallel; K contracting.
static ShardingRule matmulRule(MatmulOp op) {
  ShardingRule rule;
  int64_t rank = rankOf(op.getResult());
  rule.factors.assign(rank + 1, Kind::Parallel);
  int64_t m = rank - 2, n = rank - 1, k = rank;
  rule.factors[k] = Kind::Contracting;
  for (int64_t d = 0; d < rank; ++d)
    rule.resultDims.push_back(d);
  SmallVector<int64_t> lhs(rule.resultDims), rhs(rule.resultDims);
  lhs[n] = k;
  rhs[m] = k;
  rule.operandDims = {lhs, rhs};
  return rule;
}

SmallVector<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>
mlir::kina::reshapeGroups(ArrayRef<int64_t> source, ArrayRef<int64_t> target) {
  SmallVector<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>> groups;
  size_t s = 0, t = 0;
  while (s < source.size() || t < target.size()) {
    SmallVector<int64_t> from, to;
    int64_t a = 1, b = 1;
    // Take dims from the side with the smaller product (each side at least
    // one while it has dims left) until the products meet.
    while (s < source.size() || t < target.size()) {
      bool takeSource =
          t == target.size() ||
          (s < source.size() && (from.empty() || (!to.empty() && a < b)));
      if (takeSource) {
        a *= source[s];
        from.push_back(s++);
      } else {
        b *= target[t];
        to.push_back(t++);
      }
      bool sourceDone = !from.empty() || s == source.size();
      bool targetDone = !to.empty() || t == target.size();
      if (a == b && sourceDone && targetDone)
        break;
    }
    groups.push_back({from, to});
  }
  return groups;
}

/// A split of a group's outermost source dim maps to its outermost target
/// dim (both blocks are contiguous rows); other dims of a group are
/// blocked. The tensor's leading dims of size 1 do not count
/// ([1, 256, 64] -> [256, 64] keeps a split of the 256: a gradient
/// reshaped back to its weight's shape); inner ones do (a head's
/// [1, 4, 2] -> [1, 4, 1, 2] is split on its unit head dim).
static ShardingRule reshapeRule(ReshapeOp op) {
  ShardingRule rule;
  auto input = cast<KinaTensorType>(op.getInput().getType());
  auto result = cast<KinaTensorType>(op.getType());
  rule.resultDims.assign(result.getRank(), -1);
  SmallVector<int64_t> dims(input.getRank(), -1);
  ArrayRef<int64_t> shape = input.getShape();
  int64_t leadingUnits =
      llvm::find_if(shape, [](int64_t size) { return size != 1; }) -
      shape.begin();
  for (auto &[from, to] : reshapeGroups(input.getShape(), result.getShape())) {
    auto it = llvm::find_if(from, [&](int64_t d) { return d >= leadingUnits; });
    int64_t source = it == from.end() ? from.front() : *it;
    int64_t target = to.empty() ? -1 : to.front();
    for (int64_t d : from) {
      bool parallel = d == source && target >= 0;
      dims[d] = rule.factors.size();
      rule.factors.push_back(parallel ? Kind::Parallel : Kind::Blocked);
      if (parallel)
        rule.resultDims[target] = dims[d];
    }
  }
  rule.operandDims = {dims};
  return rule;
}

/// ids dims are the result's leading dims; the table's dims but its rows
/// are the trailing ones; the rows are blocked.
static ShardingRule gatherRule(GatherOp op) {
  ShardingRule rule;
  int64_t idRank = rankOf(op.getIds());
  int64_t rank = rankOf(op.getResult());
  rule.factors.assign(rank + 1, Kind::Parallel);
  int64_t rows = rank;
  rule.factors[rows] = Kind::Blocked;
  for (int64_t d = 0; d < rank; ++d)
    rule.resultDims.push_back(d);
  SmallVector<int64_t> table = {rows}, ids;
  for (int64_t d = idRank; d < rank; ++d)
    table.push_back(d);
  for (int64_t d = 0; d < idRank; ++d)
    ids.push_back(d);
  rule.operandDims = {table, ids};
  return rule;
}

/// The ids' dims are summed over (a device holding some of the ids adds
/// only theirs: a partial table); the rows are blocked; the updates'
/// trailing dims are the table's.
static ShardingRule scatterAddRule(ScatterAddOp op) {
  ShardingRule rule;
  int64_t idRank = rankOf(op.getIds());
  int64_t rank = rankOf(op.getUpdates());
  rule.factors.assign(rank + 1, Kind::Parallel);
  SmallVector<int64_t> ids, updates;
  for (int64_t d = 0; d < idRank; ++d) {
    rule.factors[d] = Kind::Contracting;
    ids.push_back(d);
  }
  int64_t rows = rank;
  rule.factors[rows] = Kind::Blocked;
  rule.resultDims.push_back(rows);
  for (int64_t d = 0; d < rank; ++d) {
    updates.push_back(d);
    if (d >= idRank)
      rule.resultDims.push_back(d);
  }
  rule.operandDims = {updates, ids};
  return rule;
}

/// The ids' dims are the result's leading dims; the classes are blocked.
static ShardingRule oneHotRule(OneHotOp op) {
  ShardingRule rule;
  int64_t rank = rankOf(op.getResult());
  rule.factors.assign(rank, Kind::Parallel);
  rule.factors[rank - 1] = Kind::Blocked;
  SmallVector<int64_t> ids;
  for (int64_t d = 0; d < rank; ++d) {
    rule.resultDims.push_back(d);
    if (d + 1 < rank)
      ids.push_back(d);
  }
  rule.operandDims = {ids};
  return rule;
}

/// sum: the reduced axis is contracting (a split one leaves each device a
/// partial sum, all-reduced where a whole value is needed). mean and max
/// keep it blocked: their all-reduce is not a sum of partial values (mean
/// would need the global count, max a max-reduce), so a split axis is
/// gathered first.
static ShardingRule axisReductionRule(Operation *op, int64_t axis) {
  ShardingRule rule;
  int64_t rank = rankOf(op->getResult(0));
  rule.factors.assign(rank, Kind::Parallel);
  rule.factors[axis] = isa<SumOp>(op) ? Kind::Contracting : Kind::Blocked;
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    dims.push_back(d);
    rule.resultDims.push_back(d == axis ? -1 : d);
  }
  rule.operandDims = {dims};
  return rule;
}

bool mlir::kina::passesPartialSums(Operation *op) {
  return isa<SumOp, MeanOp, ReshapeOp, TransposeOp, SliceOp, NegOp, AddOp,
             SubOp>(op);
}

std::optional<ShardingRule> mlir::kina::getShardingRule(Operation *op) {
  if (op->hasTrait<Elementwise>())
    return elementwise(op);
  return llvm::TypeSwitch<Operation *, std::optional<ShardingRule>>(op)
      .Case([](SumOp op) { return axisReductionRule(op, op.getAxis()); })
      .Case([](MeanOp op) { return axisReductionRule(op, op.getAxis()); })
      .Case([](MaxOp op) { return axisReductionRule(op, op.getAxis()); })
      .Case([](BroadcastOp op) { return broadcastRule(op); })
      .Case([](TransposeOp op) { return transposeRule(op); })
      .Case([](MatmulOp op) { return matmulRule(op); })
      .Case([](ReshapeOp op) { return reshapeRule(op); })
      .Case([](GatherOp op) { return gatherRule(op); })
      .Case([](ScatterAddOp op) { return scatterAddRule(op); })
      .Case([](SliceOp op) { return elementwiseBlocking(op, op.getAxis()); })
      .Case([](ConcatOp op) { return elementwiseBlocking(op, op.getAxis()); })
      .Case([](SoftmaxOp op) { return elementwiseBlocking(op, op.getAxis()); })
      .Case([](LogSoftmaxOp op) {
        return elementwiseBlocking(op, op.getAxis());
      })
      .Case([](OneHotOp op) { return oneHotRule(op); })
      .Default([](Operation *) { return std::nullopt; });
}
