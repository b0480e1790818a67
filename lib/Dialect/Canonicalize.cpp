//===- Canonicalize.cpp - Canonicalization patterns of the kina ops -------===//
//
// concat of adjacent slices of one value along the slice axis reads one
// contiguous range: it becomes one slice (which folds to the value when the
// range is whole). This undoes a shard-then-gather round trip. Collectives
// over a mesh axis of one device become reshards.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kina;

namespace {
/// Merges each run of operands `slice(x)[a, b), slice(x)[b, c), ...` taken
/// on the concat axis into one `slice(x)[a, c)`.
struct MergeAdjacentSlices : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    int64_t axis = concat.getAxis();
    auto sliceOnAxis = [axis](Value v) -> SliceOp {
      auto slice = v.getDefiningOp<SliceOp>();
      return slice && int64_t(slice.getAxis()) == axis ? slice : SliceOp();
    };
    SmallVector<Value> operands;
    bool merged = false;
    ValueRange inputs = concat.getInputs();
    for (size_t i = 0; i < inputs.size();) {
      SliceOp first = sliceOnAxis(inputs[i]);
      size_t end = i + 1;
      while (first && end < inputs.size()) {
        SliceOp next = sliceOnAxis(inputs[end]);
        SliceOp previous = sliceOnAxis(inputs[end - 1]);
        if (!next || next.getInput() != first.getInput() ||
            next.getStart() != previous.getStop())
          break;
        ++end;
      }
      if (end - i < 2) {
        operands.push_back(inputs[i++]);
        continue;
      }
      SliceOp last = sliceOnAxis(inputs[end - 1]);
      auto slice =
          createInferred<SliceOp>(rewriter, concat.getLoc(), first.getInput(),
                                  axis, first.getStart(), last.getStop());
      if (!slice)
        return failure();
      operands.push_back(slice);
      merged = true;
      i = end;
    }
    if (!merged)
      return failure();
    rewriter.replaceOpWithNewOp<ConcatOp>(concat, concat.getType(), operands,
                                          axis);
    return success();
  }
};
/// A collective over a mesh axis of one device moves nothing, but in the
/// global view it still changes the placement's spelling (a split over
/// one device is no split): it becomes that reshard. (Where the types
/// agree, the fold has removed it already.)
template <typename OpT> struct CollectiveOverOneDevice : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    MeshOp mesh = MeshOp::lookup(op);
    std::optional<int64_t> size =
        mesh ? mesh.getAxisSize(op.getOver()) : std::nullopt;
    if (!size || *size != 1)
      return failure();
    rewriter.replaceOpWithNewOp<ReshardOp>(op, op.getType(), op.getInput());
    return success();
  }
};
} // namespace

#define KINA_COLLECTIVE_CANONICALIZATION(OP)                                   \
  void OP::getCanonicalizationPatterns(RewritePatternSet &results,             \
                                       MLIRContext *context) {                 \
    results.add<CollectiveOverOneDevice<OP>>(context);                         \
  }
KINA_COLLECTIVE_CANONICALIZATION(AllGatherOp)
KINA_COLLECTIVE_CANONICALIZATION(AllSliceOp)
KINA_COLLECTIVE_CANONICALIZATION(AllReduceOp)
KINA_COLLECTIVE_CANONICALIZATION(ReduceScatterOp)
KINA_COLLECTIVE_CANONICALIZATION(AllToAllOp)
KINA_COLLECTIVE_CANONICALIZATION(PermuteOp)
#undef KINA_COLLECTIVE_CANONICALIZATION

void ConcatOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<MergeAdjacentSlices>(context);
}
