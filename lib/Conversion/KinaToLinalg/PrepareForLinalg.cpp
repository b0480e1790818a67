//===- PrepareForLinalg.cpp - kina-to-kina rewrites before the lowering ---===//
//
// Decisions about how an op lowers that depend on its neighbours are made
// here (--kina-prepare-for-linalg), on kina, so that each lowering pattern reads only its own op:
// - FoldSharedWeightMatmul: every batch of `x @ broadcast(w)` shares the
//   rank-2 `w`, so the batch dims fold into the rows: reshape x to
//   [B*M, K], one matmul with w itself, reshape to [..., M, N]. Each
//   output element is the same dot product, so the bits are those of the
//   batched form; the broadcast copy of w is never made.
// - UnitBatchMatmul: a matmul whose batch dims are all 1 (a backward's
//   `c @ w^T` and `x^T @ c` of a [1, T, D] activation) is the rank-2
//   matmul of its reshaped operands, which the matmul kernel takes (a
//   batch matmul would run as plain loops: 100x slower at the GPT's
//   vocabulary).
// - TransposeOfBroadcast: transpose(broadcast(w)) that keeps the dims the
//   broadcast added in place is broadcast(transpose(w)), so that the
//   backward's `c @ broadcast(w)^T` folds like the forward's product: no
//   copy of the weight per batch, no transpose of that copy (for the
//   GPT's loss gradients, 700 MB of fresh memory per call).
// - UnitBroadcastIsReshape: a broadcast that only adds dims of size 1
//   copies nothing: it is a reshape (a view).
// - WeightGradientOverAllRows: sum over the batch of `x^T @ c` per batch
//   (a backward's weight gradient, x [B, T, K], c [B, T, N]) is one
//   product over all B * T rows: no [B, K, N] of per-batch products, no
//   pass summing them, and a contraction B times longer for the matmul
//   kernel. The sums run in another order (float32 rounding).
// - GatherBeforeUnitDims: a per-device all_gather of a value that a
//   reshape only gave unit dims gathers the value itself, then reshapes.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "Kina/Conversion/KinaToLinalg.h"
#include "Kina/Conversion/Passes.h"
#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::kina;

/// Replaces batched matmul `op` by the rank-2 product `lhs @ rhs` (null
/// when building them failed) reshaped to `op`'s shape.
static LogicalResult replaceByMatrixProduct(PatternRewriter &rewriter,
                                            MatmulOp op, Value lhs, Value rhs) {
  auto product = lhs && rhs
                     ? createInferred<MatmulOp>(rewriter, op.getLoc(), lhs, rhs)
                     : MatmulOp();
  if (!product)
    return failure();
  auto type = cast<KinaTensorType>(op.getType());
  rewriter.replaceOpWithNewOp<ReshapeOp>(op, type, product.getResult(),
                                         type.getShape());
  return success();
}

namespace {
struct FoldSharedWeightMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto broadcast = op.getRhs().getDefiningOp<BroadcastOp>();
    auto type = cast<KinaTensorType>(op.getType());
    int64_t rank = type.getRank();
    if (!broadcast || rank < 3)
      return failure();
    Value weight = broadcast.getInput();
    if (cast<KinaTensorType>(weight.getType()).getRank() != 2)
      return failure();
    Location loc = op.getLoc();
    auto lhsType = cast<KinaTensorType>(op.getLhs().getType());
    int64_t rows = lhsType.getNumElements() / lhsType.getDimSize(rank - 1);
    auto flat = createInferred<ReshapeOp>(
        rewriter, loc, op.getLhs(),
        ArrayRef<int64_t>{rows, lhsType.getDimSize(rank - 1)});
    return replaceByMatrixProduct(rewriter, op,
                                  flat ? flat.getResult() : Value(), weight);
  }
};

struct UnitBatchMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<KinaTensorType>(op.getType());
    int64_t rank = type.getRank();
    auto isMatrixInUnitBatch = [&](Value v) {
      auto t = cast<KinaTensorType>(v.getType());
      return t.getRank() == rank &&
             llvm::all_of(t.getShape().drop_back(2),
                          [](int64_t d) { return d == 1; });
    };
    if (rank < 3 || !isMatrixInUnitBatch(op.getLhs()) ||
        !isMatrixInUnitBatch(op.getRhs()))
      return failure();
    Location loc = op.getLoc();
    auto matrix = [&](Value v) -> Value {
      auto shape = cast<KinaTensorType>(v.getType()).getShape().take_back(2);
      auto reshaped = createInferred<ReshapeOp>(rewriter, loc, v, shape);
      return reshaped ? reshaped.getResult() : Value();
    };
    return replaceByMatrixProduct(rewriter, op, matrix(op.getLhs()),
                                  matrix(op.getRhs()));
  }
};

struct TransposeOfBroadcast : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto broadcast = op.getInput().getDefiningOp<BroadcastOp>();
    if (!broadcast)
      return failure();
    Value source = broadcast.getInput();
    int64_t sourceRank = cast<KinaTensorType>(source.getType()).getRank();
    ArrayRef<int64_t> perm = op.getPerm();
    int64_t added = static_cast<int64_t>(perm.size()) - sourceRank;
    for (int64_t d = 0; d < added; ++d)
      if (perm[d] != d)
        return failure();
    SmallVector<int64_t> sourcePerm;
    for (int64_t d = added; d < static_cast<int64_t>(perm.size()); ++d)
      sourcePerm.push_back(perm[d] - added);
    auto transposed = createInferred<TransposeOp>(
        rewriter, op.getLoc(), source, ArrayRef<int64_t>(sourcePerm));
    if (!transposed)
      return failure();
    auto type = cast<KinaTensorType>(op.getType());
    rewriter.replaceOpWithNewOp<BroadcastOp>(op, type, transposed.getResult(),
                                             type.getShape());
    return success();
  }
};

struct UnitBroadcastIsReshape : OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<KinaTensorType>(op.getType());
    if (cast<KinaTensorType>(op.getInput().getType()).getNumElements() !=
        type.getNumElements())
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, type, op.getInput(),
                                           type.getShape());
    return success();
  }
};

/// sum(transpose(x, [0, 2, 1]) @ c, axis=0), x [B, T, K] and c [B, T, N]:
/// reshape(transpose(reshape(x, [B*T, K])) @ reshape(c, [B*T, N]),
/// [1, K, N]).
struct WeightGradientOverAllRows : OpRewritePattern<SumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SumOp op,
                                PatternRewriter &rewriter) const override {
    auto product = op.getInput().getDefiningOp<MatmulOp>();
    if (op.getAxis() != 0 || !product || !product->hasOneUse())
      return failure();
    auto transpose = product.getLhs().getDefiningOp<TransposeOp>();
    if (!transpose || !llvm::equal(transpose.getPerm(),
                                   ArrayRef<int64_t>{0, 2, 1}))
      return failure();
    Value x = transpose.getInput(), c = product.getRhs();
    auto xType = cast<KinaTensorType>(x.getType());
    auto cType = cast<KinaTensorType>(c.getType());
    if (xType.getRank() != 3 || cType.getRank() != 3)
      return failure();
    int64_t rows = xType.getDimSize(0) * xType.getDimSize(1);
    Location loc = op.getLoc();
    auto flatX = createInferred<ReshapeOp>(
        rewriter, loc, x, ArrayRef<int64_t>{rows, xType.getDimSize(2)});
    auto flatC = createInferred<ReshapeOp>(
        rewriter, loc, c, ArrayRef<int64_t>{rows, cType.getDimSize(2)});
    auto xT = flatX ? createInferred<TransposeOp>(rewriter, loc, flatX,
                                                  ArrayRef<int64_t>{1, 0})
                    : TransposeOp();
    auto sum = xT && flatC
                   ? createInferred<MatmulOp>(rewriter, loc, xT, flatC)
                   : MatmulOp();
    if (!sum)
      return failure();
    auto type = cast<KinaTensorType>(op.getType());
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, type, sum.getResult(),
                                           type.getShape());
    return success();
  }
};

/// all_gather(reshape(x), axis) where the reshape only adds unit dims to
/// x: reshape(all_gather(x, k)), k the first dim of x at or after `axis`.
/// Both lay out each device's block of `prod(dims before axis)` rows the
/// same way. The gather then takes x as its producer computed it, so the
/// lowering can compute that producer in its place in the gathered buffer
/// (eliminate-empty-tensors follows an insert's source, not a reshape).
struct GatherBeforeUnitDims : OpRewritePattern<AllGatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllGatherOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<KinaTensorType>(op.getType());
    auto reshape = op.getInput().getDefiningOp<ReshapeOp>();
    if (!type.getPlacement().isLocal() || !reshape)
      return failure();
    auto source = cast<KinaTensorType>(reshape.getInput().getType());
    ArrayRef<int64_t> reshaped =
        cast<KinaTensorType>(reshape.getType()).getShape();
    SmallVector<int64_t> nonUnit;
    llvm::copy_if(reshaped, std::back_inserter(nonUnit),
                  [](int64_t dim) { return dim != 1; });
    if (!llvm::equal(nonUnit, source.getShape()))
      return failure();
    // The source's dims before `axis`: its gather axis is the next one.
    int64_t axis = op.getAxis();
    int64_t sourceAxis = llvm::count_if(reshaped.take_front(axis),
                                        [](int64_t dim) { return dim != 1; });
    if (sourceAxis >= source.getRank())
      return failure();
    auto gathered = createInferred<AllGatherOp>(
        rewriter, op.getLoc(), reshape.getInput(),
        sourceAxis, op.getOver());
    if (!gathered)
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, type, gathered.getResult(),
                                           type.getShape());
    return success();
  }
};

} // namespace

void mlir::kina::populateKinaPrepareForLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldSharedWeightMatmul, UnitBatchMatmul, TransposeOfBroadcast,
               UnitBroadcastIsReshape, WeightGradientOverAllRows,
               GatherBeforeUnitDims>(
      patterns.getContext());
}

namespace mlir::kina {
#define GEN_PASS_DEF_PREPAREFORLINALGPASS
#include "Kina/Conversion/Passes.h.inc"
} // namespace mlir::kina

namespace {
struct PrepareForLinalgPass
    : mlir::kina::impl::PrepareForLinalgPassBase<PrepareForLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateKinaPrepareForLinalgPatterns(patterns);
    // Only these rewrites: folding is --canonicalize's business.
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      signalPassFailure();
  }
};
} // namespace
