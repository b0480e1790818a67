//===- CombineAllReduces.h - One all-reduce for a sum of partials -*- C++ -*-===//
#ifndef KINA_SHARDING_COMBINEALLREDUCES_H
#define KINA_SHARDING_COMBINEALLREDUCES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kina {

/// Rewrites each sum of all-reduced partial values, `all_reduce(a) +
/// all_reduce(b)` (anywhere in a chain of adds), into `all_reduce(a + b)`:
/// the sum is linear, so the partial values add first and move once. This
/// is how Megatron's backward reduces the input gradient of Q, K and V
/// once. The float sum is reordered (sharding.md's reductions over a
/// split axis: equal to float32 rounding), and every device still gets
/// the same bits.
void combineAllReduces(func::FuncOp fn);

} // namespace mlir::kina

#endif // KINA_SHARDING_COMBINEALLREDUCES_H
