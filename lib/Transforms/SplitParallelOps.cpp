//===- SplitParallelOps.cpp - Large linalg ops as scf.forall --------------===//
//
// Matmuls get their own tiling (kina-tile-matmuls); this pass hands the
// remaining large linalg ops on tensors (elementwise, softmax's reductions,
// transposes, the gather) to the thread pool, by tiling their outermost
// parallel dimension with more than one element into an scf.forall. Only
// parallel dimensions are split, so every element is computed exactly as
// before: results do not depend on the thread count.
//
// An op that reads the tensor it writes into (a donated argument's update,
// `ins(%w) outs(%w)`, kina-donate-destinations) reads each piece from the
// loop's shared output, at the slice the piece writes: the bufferization
// then sees one buffer read and written in place, where a read of the
// original tensor beside writes to the shared one looks like a conflict
// and costs a copy of the argument.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "CheckedOptions.h"
#include "TileOp.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::kina {
#define GEN_PASS_DEF_SPLITPARALLELOPSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// In `forall`'s body: an extract_slice of a shared output's initial value
/// at exactly the slice the body writes back into that output reads the
/// shared output instead. Only that slice: another piece may already have
/// written any other.
static void readOwnSliceFromShared(scf::ForallOp forall) {
  for (auto pair : llvm::zip(forall.getOutputs(), forall.getRegionIterArgs())) {
    Value init = std::get<0>(pair), shared = std::get<1>(pair);
    SmallVector<tensor::ParallelInsertSliceOp> writes;
    for (Operation *user : shared.getUsers())
      if (auto write = dyn_cast<tensor::ParallelInsertSliceOp>(user))
        writes.push_back(write);
    if (writes.size() != 1)
      continue;
    tensor::ParallelInsertSliceOp write = writes.front();
    auto sameSlice = [&](tensor::ExtractSliceOp read) {
      return isEqualConstantIntOrValueArray(read.getMixedOffsets(),
                                            write.getMixedOffsets()) &&
             isEqualConstantIntOrValueArray(read.getMixedSizes(),
                                            write.getMixedSizes()) &&
             isEqualConstantIntOrValueArray(read.getMixedStrides(),
                                            write.getMixedStrides());
    };
    forall.getBody()->walk([&](tensor::ExtractSliceOp read) {
      if (read.getSource() == init && sameSlice(read))
        read.getSourceMutable().assign(shared);
    });
    // One slice value for the read and the write: an op that reads and
    // writes the same value elementwise is in place for the bufferization,
    // two equal slices of one buffer are a conflict (a copy per piece).
    tensor::ExtractSliceOp first;
    for (Operation &op : llvm::make_early_inc_range(*forall.getBody())) {
      auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
      if (!slice || slice.getSource() != shared || !sameSlice(slice))
        continue;
      if (!first) {
        first = slice;
        continue;
      }
      slice.replaceAllUsesWith(first.getResult());
      slice.erase();
    }
  }
}

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
      // Upstream's tiling slices an operand read at `1 - d` (a BF16
      // product's pair swap) one element long where d is not even tiled:
      // the tiled op fails to verify. Such ops stay whole; a size-1 dim
      // read at 0 (a broadcast) tiles as any other.
      if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
            return map.isProjectedPermutation(/*allowZeroInResults=*/true);
          }))
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
      Operation *loop = nullptr;
      if (failed(mlir::kina::detail::tileInPlace(
              rewriter, op, sizes, scf::SCFTilingOptions::LoopType::ForallOp,
              &loop)))
        return signalPassFailure();
      if (auto forall = dyn_cast_or_null<scf::ForallOp>(loop))
        readOwnSliceFromShared(forall);
    }
  }
};
} // namespace
