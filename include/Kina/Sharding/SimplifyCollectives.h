//===- SimplifyCollectives.h - Collectives that do less ---------*- C++ -*-===//
#ifndef KINA_SHARDING_SIMPLIFYCOLLECTIVES_H
#define KINA_SHARDING_SIMPLIFYCOLLECTIVES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kina {

/// Rewrites what the propagation left that moves or computes more than it
/// must:
/// - a sum of all-reduced partial values, `all_reduce(a) + all_reduce(b)`
///   (anywhere in a chain of adds), becomes `all_reduce(a + b)`: the
///   partial values add first and move once, as Megatron's backward
///   reduces the input gradient of Q, K and V once. The float sum is
///   reordered (equal to float32 rounding, as docs/language.md promises),
///   and every device
///   still gets the same bits;
/// - a broadcast that an all_slice cuts along a stretched dim broadcasts
///   to the block: each device fills its block only.
void simplifyCollectives(func::FuncOp fn);

} // namespace mlir::kina

#endif // KINA_SHARDING_SIMPLIFYCOLLECTIVES_H
