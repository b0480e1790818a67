//===- BF16PairProducts.h - BF16 products on vdpbf16ps ----------*- C++ -*-===//
//
// A BF16 product reaches kina-tile-matmuls as a linalg.matmul of its two
// operands widened to f32 with K's pairs swapped (vdpbf16ps's order,
// docs/language.md). Where the CPU has AVX512_BF16, the matmul is rebuilt
// on the BF16 values themselves: each operand's pairs along K packed into
// one i32 (the even element in the low half, as vdpbf16ps reads them), a
// product over K/2 pairs whose register tiles are x86vector.avx512.dot.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_TRANSFORMS_BF16PAIRPRODUCTS_H
#define KINA_TRANSFORMS_BF16PAIRPRODUCTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kina {

/// `matmul` rebuilt on the BF16 values its operands were widened from:
/// a linalg.generic M x N x K/2 over the packed pairs (the same init), or
/// failure where an operand is not such a widening (an odd K, a slice).
FailureOr<linalg::GenericOp> pairBF16Product(RewriterBase &rewriter,
                                             linalg::MatmulOp matmul);

/// Vectorizes one register tile of a pair product (height x a multiple of
/// 16 columns, any steps of K): per pair of K, a broadcast of each row's
/// pair of A and one vdpbf16ps per 16 columns.
LogicalResult vectorizePairTile(RewriterBase &rewriter, linalg::LinalgOp tile);

/// Columns of one vdpbf16ps on 512-bit vectors.
inline constexpr int64_t kPairProductLanes = 16;

} // namespace mlir::kina

#endif // KINA_TRANSFORMS_BF16PAIRPRODUCTS_H
