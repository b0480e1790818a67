//===- TileMatmuls.cpp - Cache and register tiling of linalg.matmul -------===//
//
// Two levels of tiling with the TilingInterface, then vectorization of the
// register tile and its contraction lowered to outer products. Shapes that
// the register tile does not divide keep the plain loops.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorTransforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kina {
#define GEN_PASS_DEF_TILEMATMULSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// The largest of `candidates` (descending) that divides `size`.
static int64_t largestDivisor(int64_t size, ArrayRef<int64_t> candidates) {
  for (int64_t c : candidates)
    if (size % c == 0)
      return c;
  return 1;
}

static FailureOr<Operation *>
tile(RewriterBase &rewriter, Operation *op, ArrayRef<int64_t> sizes,
     ArrayRef<int64_t> interchange,
     scf::SCFTilingOptions::LoopType loopType =
         scf::SCFTilingOptions::LoopType::ForOp) {
  scf::SCFTilingOptions options;
  options.setLoopType(loopType);
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  if (!interchange.empty())
    options.setInterchange(interchange);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
  if (failed(tiled))
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  return tiled->tiledOps.front();
}

namespace {
struct TileMatmulsPass : kina::impl::TileMatmulsPassBase<TileMatmulsPass> {
  using TileMatmulsPassBase::TileMatmulsPassBase;
  void runOnOperation() override {
    if (tileM <= 0 || tileN <= 0 || 64 % tileM ||
        (32 % tileN && tileN % 32))
      return signalPassFailure();
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp op) {
      auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
      auto lhs = dyn_cast<RankedTensorType>(op.getInputs()[0].getType());
      if (type && lhs && type.hasStaticShape() && lhs.hasStaticShape() &&
          type.getDimSize(0) % tileM == 0 && type.getDimSize(1) % tileN == 0)
        matmuls.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::MatmulOp op : matmuls) {
      auto type = cast<RankedTensorType>(op.getResult(0).getType());
      int64_t m = type.getDimSize(0), n = type.getDimSize(1);
      int64_t k =
          cast<RankedTensorType>(op.getInputs()[0].getType()).getDimSize(1);
      rewriter.setInsertionPoint(op);
      // Cache tiles, visited N, K, M: a K x N panel of B is reused by every
      // M tile while it is hot. The N tiles are independent: an scf.forall,
      // which kina-outline-parallel-loops hands to the thread pool, when
      // the matmul is worth waking threads for.
      int64_t tileM0 = largestDivisor(m, {64, 32, 16, 8, 4, 2, 1});
      int64_t tileN0 = largestDivisor(n, {256, 128, 64, 32, 16});
      int64_t tileK0 = largestDivisor(k, {256, 128, 64, 32, 16, 8, 4, 2, 1});
      Operation *panel = op;
      if (m * n * k >= parallelThreshold && n / tileN0 > 1) {
        FailureOr<Operation *> split =
            tile(rewriter, op, {0, tileN0, 0}, {},
                 scf::SCFTilingOptions::LoopType::ForallOp);
        if (failed(split))
          return signalPassFailure();
        panel = *split;
        rewriter.setInsertionPoint(panel);
        tileN0 = 0;
      }
      FailureOr<Operation *> cached =
          tile(rewriter, panel, {tileM0, tileN0, tileK0}, {1, 2, 0});
      if (failed(cached))
        return signalPassFailure();
      rewriter.setInsertionPoint(*cached);
      FailureOr<Operation *> registers =
          tile(rewriter, *cached, {tileM, tileN, 1}, {});
      if (failed(registers))
        return signalPassFailure();
      rewriter.setInsertionPoint(*registers);
      // A named contraction lowers to FMAs (mulf + addf would not fuse).
      FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
          rewriter, *registers, /*inputVectorSizes=*/{},
          /*inputScalableVecDims=*/{}, /*vectorizeNDExtract=*/false,
          /*flatten1DDepthwiseConv=*/false,
          /*assumeDynamicDimsMatchVecSizes=*/false,
          /*createNamedContraction=*/true);
      if (failed(vectorized))
        return signalPassFailure();
      rewriter.replaceOp(*registers, vectorized->replacements);
    }
    // vector.contract of the register tile as outer products; transfers
    // with permutation maps as plain ones.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
