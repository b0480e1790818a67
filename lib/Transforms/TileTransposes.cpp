//===- TileTransposes.cpp - Transposes by square blocks -------------------===//
//
// A transpose lowered to plain loops writes its output rows in order and
// reads its input down a column: for a [768, 3072] matrix, every output
// row touches 768 input rows 12 KB apart, a cache line and a page each,
// and took 8.6 ms on a Zen 5 (the backward's `dY @ W^T` spent most of its
// time there). Tiled into square blocks, each block's input rows stay in
// L1 and the TLB while the block is written. Left to LLVM, a block's loops
// still vectorize into element gathers down the input's columns (5 ms for
// that matrix); a block of registers' side is read as whole rows,
// transposed by shuffles and written as whole rows.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "CheckedOptions.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/X86Vector/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kina {
#define GEN_PASS_DEF_TILETRANSPOSESPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// The side of a block: 32 rows of 32 floats are 32 cache lines (4 KB of
/// L1) read and 32 written.
static constexpr int64_t kBlockSide = 32;
/// The register sides whose transposes lower to shuffles: AVX2's 8 x 8 and
/// AVX-512's 16 x 16 (x86vector's and vector's lowerings).
static constexpr int64_t kAvx2Side = 8, kAvx512Side = 16;

/// Tile sizes over the output's dims: `side` along the output's last dim
/// and along the output dim that reads the input's last dim, one along the
/// others; empty when the transpose keeps the last dim in place (its rows
/// are copied contiguously) or is a block of that side already.
static SmallVector<int64_t> blockSizes(linalg::TransposeOp op, int64_t side) {
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t rank = perm.size();
  if (rank < 2 || perm[rank - 1] == rank - 1)
    return {};
  ArrayRef<int64_t> shape = op.getInit().getType().getShape();
  int64_t readsLast = llvm::find(perm, rank - 1) - perm.begin();
  if (shape[rank - 1] <= side && shape[readsLast] <= side)
    return {};
  SmallVector<int64_t> sizes(rank, 1);
  sizes[rank - 1] = side;
  sizes[readsLast] = side;
  return sizes;
}

/// Whether `op`'s moving dims are whole multiples of `side` and its
/// elements 32 bits wide (what the shuffle lowerings take).
static bool fitsRegisters(linalg::TransposeOp op, int64_t side) {
  SmallVector<int64_t> sizes = blockSizes(op, side);
  if (sizes.empty())
    return false;
  ArrayRef<int64_t> shape = op.getInit().getType().getShape();
  for (auto [size, extent] : llvm::zip(sizes, shape))
    if (extent % size)
      return false;
  return op.getInit().getType().getElementType().getIntOrFloatBitWidth() ==
         32;
}

/// `sizes` (blocks of kBlockSide) shrunk, where a block would be partial,
/// to the largest multiple of `side` that divides the extent: whole blocks
/// of whole register blocks.
static SmallVector<int64_t> wholeBlocks(linalg::TransposeOp op,
                                        SmallVector<int64_t> sizes,
                                        int64_t side) {
  ArrayRef<int64_t> shape = op.getInit().getType().getShape();
  for (auto [size, extent] : llvm::zip(sizes, shape))
    while (size > side && extent % size)
      size -= side;
  return sizes;
}

/// Tiles `op` by `sizes`; the tiled op (a block), or null on failure.
static linalg::TransposeOp tileBy(RewriterBase &rewriter,
                                  linalg::TransposeOp op,
                                  ArrayRef<int64_t> sizes) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), sizes));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return {};
  rewriter.replaceOp(op, tiled->replacements);
  return dyn_cast<linalg::TransposeOp>(tiled->tiledOps.front());
}

namespace {
struct TileTransposesPass
    : mlir::kina::detail::CheckedOptions<
          mlir::kina::impl::TileTransposesPassBase<TileTransposesPass>> {
  using CheckedOptions::CheckedOptions;

  std::optional<std::string> badOption() const override {
    if (registerSide != 0 && registerSide != kAvx2Side &&
        registerSide != kAvx512Side)
      return "option 'register-side' must be 0, 8 or 16, got " +
             std::to_string(registerSide);
    return std::nullopt;
  }

  void runOnOperation() override {
    if (!optionsAreValid())
      return;
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp op) {
      if (op.hasPureTensorSemantics() && !op.hasDynamicShape())
        transposes.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::TransposeOp op : transposes) {
      bool inRegisters = registerSide && fitsRegisters(op, registerSide);
      SmallVector<int64_t> sizes = blockSizes(op, kBlockSide);
      if (inRegisters && !sizes.empty())
        sizes = wholeBlocks(op, sizes, registerSide);
      linalg::TransposeOp block = op;
      if (!sizes.empty() && !(block = tileBy(rewriter, op, sizes))) {
        op.emitError("cannot tile this transpose into blocks");
        return signalPassFailure();
      }
      if (!inRegisters)
        continue;
      SmallVector<int64_t> registers = blockSizes(block, registerSide);
      if (!registers.empty() &&
          !(block = tileBy(rewriter, block, registers))) {
        op.emitError("cannot tile this transpose into register blocks");
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(block);
      FailureOr<linalg::VectorizationResult> vectorized =
          linalg::vectorize(rewriter, block);
      if (failed(vectorized)) {
        block.emitError("cannot vectorize this transpose block");
        return signalPassFailure();
      }
      rewriter.replaceOp(block, vectorized->replacements);
    }
    // The permuted reads as row reads and a vector.transpose, which
    // becomes shuffles of whole registers.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    if (registerSide == kAvx512Side)
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::Shuffle16x16);
    if (registerSide == kAvx2Side)
      x86vector::avx2::populateSpecializedTransposeLoweringPatterns(
          patterns, x86vector::avx2::LoweringOptions().setTransposeOptions(
                        x86vector::avx2::TransposeLoweringOptions()
                            .lower8x8xf32()));
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
