//===- SimplifyCollectives.cpp - Collectives that can do less -------------===//
//
// The propagation converts a value where an op needs it converted, one op
// at a time. So a sum of several partial contributions (the input
// gradient of column-parallel Q, K and V, accumulated into a replicated
// cotangent) is all-reduced once per contribution: the adds are
// reassociated here so that the partial values add first, and one
// all-reduce remains. And a replicated broadcast that a split operand
// meets (a row statistic spread over a split axis) is computed whole and
// then cut: it is broadcast to the block instead (also through a
// transpose), as an elementwise op
// whose result is only cut is computed on the cut operands (each device
// its block of `w * decay`, where an update's other term is split). And a
// split moved to another dim is gathered and then cut: one all_to_all
// does it.
//
//===----------------------------------------------------------------------===//

#include "Kina/Sharding/SimplifyCollectives.h"

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::kina;

/// `value` as a sum all-reduce used only here, or null.
static AllReduceOp soleSumReduce(Value value) {
  auto reduce = value.getDefiningOp<AllReduceOp>();
  return reduce && reduce->hasOneUse() && reduce.getKind() == ReductionKind::sum
             ? reduce
             : AllReduceOp();
}

/// all_reduce(a + b) for `first` = all_reduce(a) and `second` =
/// all_reduce(b) over one mesh axis, or null.
static Value reduceTheSum(PatternRewriter &rewriter, AllReduceOp first,
                          AllReduceOp second) {
  if (!first || !second || first.getOver() != second.getOver() ||
      first.getType() != second.getType() ||
      first.getInput().getType() != second.getInput().getType())
    return Value();
  // Placed as the partial values are (a shape rule leaves mesh
  // placements to the propagation, which has run).
  Location loc = rewriter.getFusedLoc({first.getLoc(), second.getLoc()});
  Value sum = AddOp::create(rewriter, loc, first.getInput().getType(),
                            first.getInput(), second.getInput());
  return AllReduceOp::create(rewriter, loc, first.getType(), sum,
                             first.getKindAttr(), first.getOverAttr());
}

namespace {
/// all_reduce(a) + all_reduce(b) -> all_reduce(a + b), and
/// (r + all_reduce(a)) + all_reduce(b) -> r + all_reduce(a + b).
struct SumReducedPartials : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [x, y] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())}) {
      AllReduceOp second = soleSumReduce(y);
      if (!second)
        continue;
      if (Value reduced = reduceTheSum(rewriter, soleSumReduce(x), second)) {
        rewriter.replaceOp(add, reduced);
        return success();
      }
      auto inner = x.getDefiningOp<AddOp>();
      if (!inner || !inner->hasOneUse() || inner.getType() != add.getType())
        continue;
      for (auto [rest, first] : {std::pair(inner.getLhs(), inner.getRhs()),
                                 std::pair(inner.getRhs(), inner.getLhs())}) {
        Value reduced = reduceTheSum(rewriter, soleSumReduce(first), second);
        if (!reduced)
          continue;
        if (rest.getType() != add.getType())
          return failure();
        rewriter.replaceOpWithNewOp<AddOp>(add, add.getType(), rest, reduced);
        return success();
      }
    }
    return failure();
  }
};

/// all_slice(broadcast(x)) along a dim that the broadcast stretches (x
/// has size 1 there, or no such dim) and x does not split: the broadcast
/// placed as the slice (each device fills its block). Every use of the
/// broadcast must be that same slice (the forward's and the backward's
/// products cut one weight's broadcast alike, before CSE merges them).
struct BroadcastTheBlock : OpRewritePattern<AllSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AllSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto broadcast = slice.getInput().getDefiningOp<BroadcastOp>();
    if (!broadcast ||
        !llvm::all_of(broadcast->getUsers(), [&](Operation *user) {
          auto other = dyn_cast<AllSliceOp>(user);
          return other && other.getAxis() == slice.getAxis() &&
                 other.getOver() == slice.getOver();
        }))
      return failure();
    auto input = cast<KinaTensorType>(broadcast.getInput().getType());
    auto result = cast<KinaTensorType>(broadcast.getType());
    int64_t axis = slice.getAxis();
    int64_t inputDim = axis - (result.getRank() - input.getRank());
    bool stretched = inputDim < 0 || input.getDimSize(inputDim) == 1;
    if (!stretched || !input.getPlacement().isReplicated())
      return failure();
    rewriter.setInsertionPoint(broadcast);
    auto block = BroadcastOp::create(rewriter, broadcast.getLoc(),
                                     slice.getType(), broadcast.getInput(),
                                     broadcast.getShapeAttr());
    for (Operation *user : llvm::to_vector(broadcast->getUsers()))
      rewriter.replaceOp(user, block);
    rewriter.eraseOp(broadcast);
    return success();
  }
};

/// all_slice(e(a, b, ...)) of an elementwise op used only there, whose
/// operands are placed as its result: e(all_slice(a), all_slice(b), ...),
/// each device computing its block only.
struct SliceTheOperands : OpRewritePattern<AllSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllSliceOp slice,
                                PatternRewriter &rewriter) const override {
    Operation *op = slice.getInput().getDefiningOp();
    if (!op || !op->hasTrait<Elementwise>() || !op->hasOneUse() ||
        llvm::any_of(op->getOperands(), [&](Value operand) {
          return placementOf(operand) != placementOf(slice.getInput());
        }))
      return failure();
    SmallVector<Value> cut;
    for (Value operand : op->getOperands()) {
      auto part = createInferred<AllSliceOp>(rewriter, slice.getLoc(), operand,
                                             slice.getAxis(), slice.getOver());
      if (!part)
        return failure();
      cut.push_back(part);
    }
    Operation *blocked = rewriter.clone(*op);
    blocked->setOperands(cut);
    blocked->getResult(0).setType(slice.getType());
    rewriter.replaceOp(slice, blocked->getResults());
    rewriter.eraseOp(op);
    return success();
  }
};

/// all_slice(transpose(x)) of a transpose used only there: the transpose
/// of x cut on the dim the transpose moves to the cut one, so that what x
/// is made of is cut in turn (the backward's `transpose(broadcast(w))`,
/// each device then filling its block of the broadcast, as the forward's).
struct SliceBeforeTranspose : OpRewritePattern<AllSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AllSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto transpose = slice.getInput().getDefiningOp<TransposeOp>();
    if (!transpose || !transpose->hasOneUse())
      return failure();
    auto cut = createInferred<AllSliceOp>(
        rewriter, slice.getLoc(), transpose.getInput(),
        transpose.getPerm()[slice.getAxis()], slice.getOver());
    if (!cut)
      return failure();
    Operation *moved = rewriter.clone(*transpose);
    moved->setOperand(0, cut);
    moved->getResult(0).setType(slice.getType());
    rewriter.replaceOp(slice, moved->getResults());
    rewriter.eraseOp(transpose);
    return success();
  }
};

/// all_slice(all_gather(x, a), b) over one mesh axis, a != b: the split
/// moves from a to b in one all_to_all ((n-1)/n of the block sent, not
/// n-1 blocks). The propagation gathers an operand that splits another
/// dim than the one kept, then cuts it to the kept one.
struct GatherThenCutIsAMove : OpRewritePattern<AllSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AllSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto gather = slice.getInput().getDefiningOp<AllGatherOp>();
    if (!gather || !gather->hasOneUse() ||
        gather.getOver() != slice.getOver() ||
        gather.getAxis() == slice.getAxis())
      return failure();
    auto move = createInferred<AllToAllOp>(
        rewriter, rewriter.getFusedLoc({gather.getLoc(), slice.getLoc()}),
        gather.getInput(), gather.getAxis(), slice.getAxis(),
        slice.getOver());
    if (!move || move.getType() != slice.getType()) {
      if (move)
        rewriter.eraseOp(move);
      return failure();
    }
    rewriter.replaceOp(slice, move);
    rewriter.eraseOp(gather);
    return success();
  }
};
} // namespace

void mlir::kina::simplifyCollectives(func::FuncOp fn) {
  RewritePatternSet patterns(fn.getContext());
  patterns.add<SumReducedPartials, BroadcastTheBlock, SliceTheOperands,
               SliceBeforeTranspose, GatherThenCutIsAMove>(fn.getContext());
  GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  (void)applyPatternsGreedily(fn, std::move(patterns), config);
}
