//===- MergeShards.cpp - Shards folded back into whole-tensor ops ---------===//
//
// The inverse of partitioning, as rewrites of the kina dialect:
// - a concat of ops of one kind, with one set of attributes, along a dim
//   that their sharding rule says is computed block by block, is that op
//   on the concats of its operands (the blocks of a column-parallel
//   matmul, of per-head attention, of a broadcast, a reshape, a softmax
//   along another axis...); operands without that dim must be one value;
// - a sum of two matmuls is one matmul over the concatenated contracting
//   dim (a block matrix product: the row-parallel partial products), its
//   blocks in the order of the slices they read; in a longer sum the
//   products by shards of one value are first brought together;
// - a sum of two concats cut at the same places is the concat of the
//   blockwise sums, and adding zeros is nothing (the adjoint of a slice
//   pads its cotangent with zeros: the shards' gradients add up to the
//   whole one);
// - a concat of a concat on the same axis is one concat, and a concat of
//   adjacent slices of one value is that value (the dialect's own folds).
// Together they walk each shard-then-gather structure back to the whole
// op, so that a hand-written or partitioned program can be compared with
// the unsharded one on its IR.
//
//===----------------------------------------------------------------------===//

#include "Kina/Sharding/Passes.h"
#include "Kina/Sharding/ShardingRules.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kina {
#define GEN_PASS_DEF_MERGESHARDSPASS
#include "Kina/Sharding/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using namespace mlir::kina;

/// A concat of `values` on `axis`, or null when their shapes do not join.
static Value tryConcat(PatternRewriter &rewriter, Location loc,
                       ArrayRef<Value> values, int64_t axis) {
  auto concat = tryCreateInferred<ConcatOp>(rewriter, loc, values, axis);
  return concat ? concat.getResult() : Value();
}

namespace {
struct SinkConcatIntoOperands : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    SmallVector<Operation *> parts;
    for (Value input : concat.getInputs())
      parts.push_back(input.getDefiningOp());
    Operation *first = parts.front();
    if (parts.size() < 2 || !first || first->getNumResults() != 1 ||
        !isa<InferResultTypeOpInterface>(first))
      return failure();
    // One kind of op with one set of attributes (a shape may differ).
    auto attrsOf = [](Operation *op) {
      NamedAttrList attrs(getInherentAttrs(op));
      if (auto named = dyn_cast<NamesShapeOpInterface>(op))
        attrs.erase(named.getShapeAttrName());
      return attrs.getDictionary(op->getContext());
    };
    DictionaryAttr attrs = attrsOf(first);
    for (Operation *part : parts)
      if (!part || part->getName() != first->getName() ||
          attrsOf(part) != attrs)
        return failure();
    std::optional<ShardingRule> rule = getShardingRule(first);
    if (!rule)
      return failure();
    int64_t factor = rule->resultDims[concat.getAxis()];
    if (factor < 0 || rule->factors[factor] != ShardingRule::Kind::Parallel)
      return failure();
    SmallVector<Value> operands;
    for (unsigned j = 0; j < first->getNumOperands(); ++j) {
      SmallVector<Value> blocks;
      for (Operation *part : parts)
        blocks.push_back(part->getOperand(j));
      std::optional<int64_t> dim = rule->operandDimOf(j, factor);
      if (!dim) {
        // Not cut along this dim: every block used the same value.
        if (!llvm::all_equal(blocks))
          return failure();
        operands.push_back(blocks.front());
        continue;
      }
      Value joined = tryConcat(rewriter, concat.getLoc(), blocks, *dim);
      if (!joined)
        return failure();
      operands.push_back(joined);
    }
    NamedAttrList merged(getInherentAttrs(first));
    auto type = cast<KinaTensorType>(concat.getType());
    if (auto named = dyn_cast<NamesShapeOpInterface>(first))
      merged.set(named.getShapeAttrName(),
                 rewriter.getDenseI64ArrayAttr(type.getShape()));
    FailureOr<Type> inferred =
        cast<InferResultTypeOpInterface>(first).inferResultType(
            TypeRange(ValueRange(operands)), merged.getDictionary(getContext()),
            MeshOp::lookup(concat), [] { return InFlightDiagnostic(); });
    if (failed(inferred) || *inferred != concat.getType())
      return failure();
    OperationState state(concat.getLoc(), first->getName());
    state.addOperands(operands);
    state.addAttributes(merged);
    state.addTypes(*inferred);
    rewriter.replaceOp(concat, rewriter.create(state)->getResults());
    return success();
  }
};

/// The slice that `value` reads, through layout ops (transpose, broadcast,
/// reshape): a shard of a weight as a product's operand sees it.
static SliceOp shardOf(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (auto slice = dyn_cast<SliceOp>(op))
      return slice;
    if (!isa<TransposeOp, BroadcastOp, ReshapeOp>(op))
      return SliceOp();
    value = op->getOperand(0);
  }
  return SliceOp();
}

/// Whether `a` and `b` are shards of one value on one axis.
static bool shardsOfOneValue(SliceOp a, SliceOp b) {
  return a && b && a.getInput() == b.getInput() && a.getAxis() == b.getAxis();
}

/// Whether `a` and `b` read shards of one value, `a` the later block: a
/// block product lists its blocks in order, so that the concat of the
/// slices folds back to the value.
static bool readsLaterBlock(Value a, Value b) {
  SliceOp first = shardOf(a), second = shardOf(b);
  return shardsOfOneValue(first, second) &&
         first.getStart() > second.getStart();
}

/// `A0 @ B0 + A1 @ B1` is `[A0 A1] @ [B0; B1]` when the A or the B are
/// shards of one value.
struct SumOfMatmuls : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    auto left = add.getLhs().getDefiningOp<MatmulOp>();
    auto right = add.getRhs().getDefiningOp<MatmulOp>();
    // Only products by shards of one value: joining unrelated products
    // would be as true, but would not lead back to the whole program.
    if (!left || !right ||
        !(shardsOfOneValue(shardOf(left.getLhs()), shardOf(right.getLhs())) ||
          shardsOfOneValue(shardOf(left.getRhs()), shardOf(right.getRhs()))))
      return failure();
    if (readsLaterBlock(left.getLhs(), right.getLhs()) ||
        readsLaterBlock(left.getRhs(), right.getRhs()))
      std::swap(left, right);
    int64_t rank = cast<KinaTensorType>(add.getType()).getRank();
    Location loc = add.getLoc();
    Value lhs =
        tryConcat(rewriter, loc, {left.getLhs(), right.getLhs()}, rank - 1);
    Value rhs =
        tryConcat(rewriter, loc, {left.getRhs(), right.getRhs()}, rank - 2);
    auto product = lhs && rhs
                       ? tryCreateInferred<MatmulOp>(rewriter, loc, lhs, rhs)
                       : MatmulOp();
    if (!product || product.getType() != add.getType())
      return failure();
    rewriter.replaceOp(add, product.getResult());
    return success();
  }
};

static bool isZeros(Value value);

/// `[A0 A1] + [B0 B1]` is `[A0+B0 A1+B1]` when the blocks match and some
/// block is zeros (a padded cotangent), the sums with zeros dropped; without
/// zeros it would undo SinkConcatIntoOperands.
struct SumOfConcats : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    auto left = add.getLhs().getDefiningOp<ConcatOp>();
    auto right = add.getRhs().getDefiningOp<ConcatOp>();
    if (!left || !right || left.getAxis() != right.getAxis() ||
        left.getInputs().size() != right.getInputs().size())
      return failure();
    if (!llvm::any_of(llvm::concat<Value>(left.getInputs(), right.getInputs()),
                      isZeros))
      return failure();
    SmallVector<Value> sums;
    for (auto [a, b] : llvm::zip_equal(left.getInputs(), right.getInputs())) {
      if (cast<KinaTensorType>(a.getType()).getShape() !=
          cast<KinaTensorType>(b.getType()).getShape())
        return failure();
      if (isZeros(a) && b.getType() == a.getType()) {
        sums.push_back(b);
        continue;
      }
      if (isZeros(b) && a.getType() == b.getType()) {
        sums.push_back(a);
        continue;
      }
      auto sum = tryCreateInferred<AddOp>(rewriter, add.getLoc(), a, b);
      if (!sum)
        return failure();
      sums.push_back(sum);
    }
    Value joined = tryConcat(rewriter, add.getLoc(), sums, left.getAxis());
    if (!joined || joined.getType() != add.getType())
      return failure();
    rewriter.replaceOp(add, joined);
    return success();
  }
};

/// The shard that `term` multiplies by, if any: a matmul's rhs's, else its
/// lhs's; for a sum of such products by shards of one value, its first.
static SliceOp shardOfTerm(Value term) {
  if (auto product = term.getDefiningOp<MatmulOp>()) {
    SliceOp shard = shardOf(product.getRhs());
    return shard ? shard : shardOf(product.getLhs());
  }
  auto add = term.getDefiningOp<AddOp>();
  if (!add)
    return SliceOp();
  SliceOp first = shardOfTerm(add.getLhs());
  return shardsOfOneValue(first, shardOfTerm(add.getRhs())) ? first : SliceOp();
}

/// A sum (a chain of adds, each used once) in which products by shards of
/// one value are apart, as a backward pass accumulates them (head 1's
/// query, key and value, then head 0's): rebuilt with each value's shard
/// products summed first, in block order, where the first of them was, so
/// that SumOfMatmuls joins them into one block product. Addition is
/// reordered; the proof compares expressions.
struct GroupShardProducts : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp root,
                                PatternRewriter &rewriter) const override {
    if (root->hasOneUse() && isa<AddOp>(*root->getUsers().begin()))
      return failure(); // not the whole sum
    // The terms: a sum of one value's shard products is one term.
    SmallVector<Value> terms;
    std::function<void(Value)> collect = [&](Value value) {
      auto add = value.getDefiningOp<AddOp>();
      if (add && (value == root.getResult() || add->hasOneUse()) &&
          add.getType() == root.getType() && !shardOfTerm(value)) {
        collect(add.getLhs());
        collect(add.getRhs());
        return;
      }
      terms.push_back(value);
    };
    collect(root.getResult());
    // Each term after the first of its value's shards joins that one.
    SmallVector<SmallVector<Value>> groups;
    for (Value term : terms) {
      SliceOp shard = shardOfTerm(term);
      auto group = llvm::find_if(groups, [&](ArrayRef<Value> g) {
        return shardsOfOneValue(shard, shardOfTerm(g.front()));
      });
      if (group == groups.end())
        groups.push_back({term});
      else
        group->push_back(term);
    }
    if (groups.size() == terms.size())
      return failure(); // nothing apart
    auto sum = [&](Value a, Value b) -> Value {
      auto add = tryCreateInferred<AddOp>(rewriter, root.getLoc(), a, b);
      return add ? add.getResult() : Value();
    };
    Value total;
    for (SmallVector<Value> &group : groups) {
      llvm::sort(group, [](Value a, Value b) { // all read shards if > 1
        return shardOfTerm(a).getStart() < shardOfTerm(b).getStart();
      });
      Value part = group.front();
      for (Value term : ArrayRef(group).drop_front())
        if (!(part = sum(part, term)))
          return failure();
      if (total && !(total = sum(total, part)))
        return failure();
      if (!total)
        total = part;
    }
    rewriter.replaceOp(root, total);
    return success();
  }
};

/// Whether `value` is zeros: a literal 0, perhaps broadcast.
static bool isZeros(Value value) {
  if (auto broadcast = value.getDefiningOp<BroadcastOp>())
    value = broadcast.getInput();
  auto constant = value.getDefiningOp<ConstantOp>();
  return constant && constant.getValue().isZero();
}

/// `x + 0` is `x` (in the merged program's algebra: the proof compares
/// expressions, and `-0 + 0` is the only value it changes).
struct AddZeros : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [value, other] : {std::pair(add.getLhs(), add.getRhs()),
                                std::pair(add.getRhs(), add.getLhs())})
      if (isZeros(other) && value.getType() == add.getType()) {
        rewriter.replaceOp(add, value);
        return success();
      }
    return failure();
  }
};

/// A concat operand that is a concat on the same axis gives its operands.
struct FlattenNestedConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> inputs;
    bool flattened = false;
    for (Value input : concat.getInputs()) {
      auto inner = input.getDefiningOp<ConcatOp>();
      if (inner && inner.getAxis() == concat.getAxis()) {
        llvm::append_range(inputs, inner.getInputs());
        flattened = true;
      } else {
        inputs.push_back(input);
      }
    }
    if (!flattened)
      return failure();
    rewriter.replaceOpWithNewOp<ConcatOp>(concat, concat.getType(), inputs,
                                          concat.getAxis());
    return success();
  }
};

struct MergeShardsPass
    : mlir::kina::impl::MergeShardsPassBase<MergeShardsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkConcatIntoOperands, SumOfMatmuls, GroupShardProducts,
                 SumOfConcats, AddZeros, FlattenNestedConcat>(&getContext());
    ConcatOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
