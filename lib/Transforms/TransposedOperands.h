//===- TransposedOperands.h - Matmul operands read through a transpose -*- C++ -*-===//
//
// The backward's products read a transposed operand: dX = dY W^T and
// dW = X^T dY. Materializing the transpose copies the whole operand once
// more before the product; kina-tile-matmuls instead reads the tiles it
// needs from the transpose's input: B's packed strips straight from W's
// rows (a transpose per block, which kina-tile-transposes does in
// registers), and A's register-tile column from X's row (contiguous
// floats, broadcast one by one as A's elements always are).
//
//===----------------------------------------------------------------------===//
#ifndef KINA_TRANSFORMS_TRANSPOSEDOPERANDS_H
#define KINA_TRANSFORMS_TRANSPOSEDOPERANDS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::kina {

/// A 2-D slice (through a chain of unit-stride extract_slices) of the
/// result of a 2-D `linalg.transpose`, as a slice of the transpose's input:
/// `source[offsets][sizes]` holds the slice's values transposed.
struct TransposedSlice {
  Value source;
  SmallVector<OpFoldResult, 2> offsets, sizes;
};

/// `slice` as a slice of a transpose's input, with the offsets summed at
/// `rewriter`'s insertion point (which every offset of the chain must
/// dominate); nothing when `slice` is not such a slice.
std::optional<TransposedSlice> sliceOfTranspose(RewriterBase &rewriter,
                                                Value slice);

/// B's K x N block packed into N / width strips of K x width (the layout
/// kina-tile-matmuls' register tiles read), from `block`, a slice of W^T:
/// a transpose of W's N x K block, viewed as strips x width x K.
Value packTransposedStrips(RewriterBase &rewriter, Location loc,
                           const TransposedSlice &block, int64_t width);

/// A's h x 1 register-tile column from `column`, a slice of X^T: the
/// 1 x h run of X's row, reshaped (no copy) to h x 1.
Value columnFromRow(RewriterBase &rewriter, Location loc,
                    const TransposedSlice &column);

} // namespace mlir::kina

#endif // KINA_TRANSFORMS_TRANSPOSEDOPERANDS_H
