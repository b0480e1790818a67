//===- TileOp.h - One linalg op tiled in place ------------------*- C++ -*-===//
#ifndef KINA_LIB_TRANSFORMS_TILEOP_H
#define KINA_LIB_TRANSFORMS_TILEOP_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::kina::detail {

/// Replaces `op` by its tiling with `sizes` (0: that loop untiled) into
/// loops of `loopType` (the outermost in `outer`, when given); fails as the
/// tiling does.
inline LogicalResult tileInPlace(RewriterBase &rewriter, linalg::LinalgOp op,
                                 ArrayRef<int64_t> sizes,
                                 scf::SCFTilingOptions::LoopType loopType =
                                     scf::SCFTilingOptions::LoopType::ForOp,
                                 Operation **outer = nullptr) {
  scf::SCFTilingOptions options;
  options.setLoopType(loopType);
  options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), sizes));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return failure();
  if (outer)
    *outer = tiled->loops.empty() ? nullptr : tiled->loops.front().getOperation();
  rewriter.replaceOp(op, tiled->replacements);
  return success();
}

} // namespace mlir::kina::detail

#endif // KINA_LIB_TRANSFORMS_TILEOP_H
