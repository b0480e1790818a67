//===- KinaToLinalg.h - kina to linalg/tensor/arith -------------*- C++ -*-===//
//
// The patterns of `--kina-to-linalg`, exported so that other pipelines can
// reuse them.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_CONVERSION_KINATOLINALG_H
#define KINA_CONVERSION_KINATOLINALG_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::kina {

/// `!kina.tensor<shape x elt, @placement>` becomes `tensor<shape x elt>`.
class KinaTypeConverter : public TypeConverter {
public:
  KinaTypeConverter();
};

/// kina-to-kina rewrites that make the lowering cheaper, applied before
/// it: `x @ broadcast(w)` with `w` of rank 2 becomes one rank-2 matmul of
/// the batch-folded `x` with `w` itself (reshape, matmul, reshape), so the
/// broadcast copy of the weights is never made; a per-device all_gather of
/// a value that a reshape only gave unit dims gathers the value and then
/// reshapes (so its producer can compute into the gathered buffer); a
/// per-device all_to_all becomes all_gather then all_slice.
void populateKinaPrepareForLinalgPatterns(RewritePatternSet &patterns);

/// Data movement: slice, concat, gather, broadcast, reshape, transpose.
/// A gather reads at clamped ids and states `cf.assert` "every id is in
/// range"; `kina-asserts-to-status` turns that into a returned status.
void populateKinaDataMovementToLinalgPatterns(TypeConverter &converter,
                                              RewritePatternSet &patterns);
/// Compute: constant, matmul, softmax, elementwise arithmetic.
void populateKinaComputeToLinalgPatterns(TypeConverter &converter,
                                         RewritePatternSet &patterns);
/// Collectives of per-device (`@local`) functions: calls of the runtime's
/// `kina_collective_<name>` on buffers.
void populateKinaCollectivesToRuntimePatterns(TypeConverter &converter,
                                              RewritePatternSet &patterns);
/// All of the above.
void populateKinaToLinalgPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns);

} // namespace mlir::kina

#endif // KINA_CONVERSION_KINATOLINALG_H
