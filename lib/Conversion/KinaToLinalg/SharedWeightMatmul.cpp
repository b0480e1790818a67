//===- SharedWeightMatmul.cpp - x @ broadcast(w) as one rank-2 matmul -----===//
//
// A kina-to-kina rewrite applied before the lowering. Every batch of
// `x @ broadcast(w)` shares the rank-2 `w`, so the batch dims fold into
// the rows: reshape x to [B*M, K], one matmul with w itself, reshape to
// [..., M, N]. Each output element is the same dot product, so the bits
// are those of the batched form; the broadcast copy of w is never made.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "Kina/Conversion/KinaToLinalg.h"
#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kina;

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
    auto product =
        flat ? createInferred<MatmulOp>(rewriter, loc, flat.getResult(), weight)
             : MatmulOp();
    if (!product)
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, type, product.getResult(),
                                           type.getShape());
    return success();
  }
};
} // namespace

void mlir::kina::populateKinaPrepareForLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldSharedWeightMatmul>(patterns.getContext());
  detail::populateSplitAllToAllPatterns(patterns);
}
