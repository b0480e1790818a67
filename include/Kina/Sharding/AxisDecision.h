//===- AxisDecision.h - What one op keeps split over one mesh axis -*- C++ -*-===//
//
// The propagation's choice for one mesh axis of one op whose operands
// split factors over it, made apart from its application (the collectives
// inserted, in PropagateSharding.cpp) and its explanation (the remarks'
// reasons): a function of the IR's types that changes no IR.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_SHARDING_AXISDECISION_H
#define KINA_SHARDING_AXISDECISION_H

#include "Kina/Sharding/CostRecords.h"
#include "Kina/Sharding/ShardingRules.h"

namespace mlir::kina {

struct AxisDecision {
  /// The operands that split a factor over the axis, with the factor.
  SmallVector<std::pair<unsigned, int64_t>> claims;
  /// The factor kept split over the axis; none when gathering every
  /// operand sends the fewest bytes.
  std::optional<int64_t> keep;
  /// Whether the kept factor can stay split: its result dim divides by
  /// the axis size, and every operand that has it can take the split.
  bool keepable = false;
  /// The result dim of the kept factor; none for a contracting factor
  /// (the result is then partial over the axis).
  std::optional<int64_t> resultDim;
  /// The plans weighed ("keeping operand #0's split", "gathering every
  /// operand", always last), with the bytes each device would send, and
  /// the bytes of the plan chosen.
  std::vector<WeighedPlan> weighed;
  int64_t chosenBytes = 0;

  /// Whether claiming operand `operand` keeps its split.
  bool keeps(unsigned operand) const;
};

/// Decides which factor `op` keeps split over mesh `axis`, in the bytes
/// each device sends: keeping factor f gathers the operands that split
/// another factor, reduces the result later if f is contracting (a
/// reduce_scatter when the result's type asks for a split, else an
/// all_reduce), and moves a result whose asked split differs; gathering
/// every operand is the alternative. Ties keep the first operand's split.
/// `result` is the result's placement as the mesh axes decided so far
/// place it (its block is counted so). `keepASplit`: gathering every
/// operand is weighed but not chosen. No claims: an empty decision.
AxisDecision decideAxis(Operation *op, const ShardingRule &rule,
                        StringAttr axis, PlacementAttr result, MeshOp mesh,
                        bool keepASplit = false);

} // namespace mlir::kina

#endif // KINA_SHARDING_AXISDECISION_H
