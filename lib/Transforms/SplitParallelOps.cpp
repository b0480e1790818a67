//===- SplitParallelOps.cpp - Large linalg ops as scf.forall --------------===//
//
// Matmuls get their own tiling (kina-tile-matmuls); this pass hands the
// remaining large linalg ops on tensors (elementwise, softmax's reductions,
// transposes, the gather) to the thread pool, by tiling their outermost
// parallel dimension with more than one element into an scf.forall. Only
// parallel dimensions are split, so every element is computed exactly as
// before: results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "CheckedOptions.h"
#include "TileOp.h"

namespace mlir::kina {
#define GEN_PASS_DEF_SPLITPARALLELOPSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// Tile sizes that split the outermost parallel dimension of more than one
/// iteration into about `pieces` tiles; empty if there is none.
static SmallVector<int64_t> splitSizes(linalg::LinalgOp op, int64_t pieces) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [dim, range] : llvm::enumerate(ranges)) {
    if (iterators[dim] != utils::IteratorType::parallel ||
        ShapedType::isDynamic(range) || range < 2)
      continue;
    SmallVector<int64_t> sizes(ranges.size(), 0);
    sizes[dim] = llvm::divideCeil(range, std::min(range, pieces));
    return sizes;
  }
  return {};
}

namespace {
struct SplitParallelOpsPass
    : mlir::kina::detail::CheckedOptions<
          mlir::kina::impl::SplitParallelOpsPassBase<SplitParallelOpsPass>> {
  using CheckedOptions::CheckedOptions;

  /// What is wrong with the options, if anything.
  std::optional<std::string> badOption() const override {
    if (pieces < 1)
      return "option 'pieces' must be at least 1, got " +
             std::to_string(pieces);
    if (minIterations < 1)
      return "option 'min-iterations' must be at least 1, got " +
             std::to_string(minIterations);
    return std::nullopt;
  }

  void runOnOperation() override {
    if (!optionsAreValid())
      return;
    SmallVector<linalg::LinalgOp> large;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || isa<linalg::FillOp>(op) ||
          op->getParentOfType<LoopLikeOpInterface>() || op.hasDynamicShape())
        return;
      int64_t iterations = 1;
      for (int64_t range : op.getStaticLoopRanges())
        iterations *= range;
      if (iterations >= minIterations)
        large.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : large) {
      SmallVector<int64_t> sizes = splitSizes(op, pieces);
      if (sizes.empty())
        continue;
      if (failed(mlir::kina::detail::tileInPlace(
              rewriter, op, sizes, scf::SCFTilingOptions::LoopType::ForallOp)))
        return signalPassFailure();
    }
  }
};
} // namespace
