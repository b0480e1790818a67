//===- ShardingRules.h - How each kina op can be split ----------*- C++ -*-===//
//
// An op's sharding rule names the "factors" of its iteration space and
// says which dim of each operand and of the result each factor is, as
// Shardy's OpShardingRule does. A factor split over a mesh axis in the
// operands is split the same way in the result (a parallel factor) or
// makes the result a partial sum (a contracting factor); a blocked factor
// cannot be split at all (the axis of a slice, of a concat, of a softmax,
// a gather table's rows, a reshape dim that does not map whole).
//
//===----------------------------------------------------------------------===//
#ifndef KINA_SHARDING_SHARDINGRULES_H
#define KINA_SHARDING_SHARDINGRULES_H

#include "Kina/Dialect/KinaDialect.h"

namespace mlir::kina {

struct ShardingRule {
  enum class Kind { Parallel, Contracting, Blocked };
  /// The kind of each factor.
  SmallVector<Kind> factors;
  /// For each operand, and for the result: the factor of each dim, or -1
  /// (a dim of size 1 that broadcasting stretches, or none).
  SmallVector<SmallVector<int64_t>> operandDims;
  SmallVector<int64_t> resultDims;

  /// The result dim of `factor`, if it has one.
  std::optional<int64_t> resultDimOf(int64_t factor) const;
  /// The dim of operand `operand` that is `factor`, if it has one.
  std::optional<int64_t> operandDimOf(unsigned operand, int64_t factor) const;
};

/// The rule of `op`, or nullopt when the op has none (it is not computed
/// per block: constants, reshards, collectives).
std::optional<ShardingRule> getShardingRule(Operation *op);

/// Whether `op` may run on partial sums and give a partial sum: each
/// device applies it to its summands and the results sum to the op's
/// (it is linear in its operands and adds nothing of its own): sums,
/// means, reshapes, transposes, slices and negation of one operand, and
/// adds and subtracts of operands partial over the same mesh axes.
bool passesPartialSums(Operation *op);

/// Which source dims and target dims of a row-major reshape hold the same
/// elements: groups of consecutive dims with equal products.
SmallVector<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>
reshapeGroups(ArrayRef<int64_t> source, ArrayRef<int64_t> target);

} // namespace mlir::kina

#endif // KINA_SHARDING_SHARDINGRULES_H
