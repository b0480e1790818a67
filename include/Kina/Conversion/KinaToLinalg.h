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

/// The `i1` "every id was in range" of each gather the patterns lowered.
/// Whoever applies the patterns must make them observable, e.g. with
/// `returnGatherStatus`; otherwise an out-of-range id is silently clamped.
using GatherChecks = SmallVector<Value>;

/// Data movement: slice, concat, gather, broadcast, reshape, transpose.
void populateKinaDataMovementToLinalgPatterns(TypeConverter &converter,
                                              RewritePatternSet &patterns,
                                              GatherChecks &checks);
/// Compute: constant, matmul, softmax, elementwise arithmetic.
void populateKinaComputeToLinalgPatterns(TypeConverter &converter,
                                         RewritePatternSet &patterns);
/// Both of the above.
void populateKinaToLinalgPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns,
                                  GatherChecks &checks);

/// Makes each function that computed a gather check, or calls one that
/// returns it, return the conjunction of its checks as an extra, last
/// `i1` result. Fails on recursive calls.
LogicalResult returnGatherStatus(ModuleOp module, ArrayRef<Value> checks);

} // namespace mlir::kina

#endif // KINA_CONVERSION_KINATOLINALG_H
