//===- TileTransposes.cpp - Transposes by square blocks -------------------===//
//
// A transpose lowered to plain loops writes its output rows in order and
// reads its input down a column: for a [768, 3072] matrix, every output
// row touches 768 input rows 12 KB apart, a cache line and a page each,
// and took 8.6 ms on a Zen 5 (the backward's `dY @ W^T` spent most of its
// time there). Tiled into square blocks, each block's input rows stay in
// L1 and the TLB while the block is written.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "TileOp.h"

namespace mlir::kina {
#define GEN_PASS_DEF_TILETRANSPOSESPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// The side of a block: 32 rows of 32 floats are 32 cache lines (4 KB of
/// L1) read and 32 written.
static constexpr int64_t kBlockSide = 32;

/// Tile sizes over the output's dims: blocks of kBlockSide along the output's
/// last dim and along the output dim that reads the input's last dim, one
/// along the others; empty when the transpose keeps the last dim in place
/// (its rows are copied contiguously) or is a block already.
static SmallVector<int64_t> blockSizes(linalg::TransposeOp op) {
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t rank = perm.size();
  if (rank < 2 || perm[rank - 1] == rank - 1)
    return {};
  ArrayRef<int64_t> shape = op.getInit().getType().getShape();
  int64_t readsLast = llvm::find(perm, rank - 1) - perm.begin();
  if (shape[rank - 1] <= kBlockSide && shape[readsLast] <= kBlockSide)
    return {};
  SmallVector<int64_t> sizes(rank, 1);
  sizes[rank - 1] = kBlockSide;
  sizes[readsLast] = kBlockSide;
  return sizes;
}

namespace {
struct TileTransposesPass
    : mlir::kina::impl::TileTransposesPassBase<TileTransposesPass> {
  void runOnOperation() override {
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp op) {
      if (op.hasPureTensorSemantics() && !op.hasDynamicShape())
        transposes.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::TransposeOp op : transposes) {
      SmallVector<int64_t> sizes = blockSizes(op);
      if (sizes.empty())
        continue;
      if (failed(mlir::kina::detail::tileInPlace(rewriter, op, sizes)))
        return signalPassFailure();
    }
  }
};
} // namespace
