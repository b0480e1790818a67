//===- AxisDecision.cpp - What one op keeps split over one mesh axis ------===//
#include "Kina/Sharding/AxisDecision.h"

#include "Kina/Sharding/Partition.h"
#include "Kina/Sharding/Reshard.h"

#include <set>

using namespace mlir;
using namespace mlir::kina;

bool AxisDecision::keeps(unsigned operand) const {
  return keepable && llvm::any_of(claims, [&](auto claim) {
           return claim.first == operand && claim.second == keep;
         });
}

/// The other summand when `op`'s result, left partial over `axis`, would
/// join a partial sum for free: its only user is an add or sub whose
/// other operand is already partial over `axis`, placed as the result
/// would be. Else null.
static Value partialSumJoined(Operation *op, StringAttr axis,
                              PlacementAttr result) {
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return nullptr;
  Value value = op->getResult(0);
  Operation *user = *value.getUsers().begin();
  if (!isa<AddOp, SubOp>(user))
    return nullptr;
  for (Value other : user->getOperands())
    if (other != value && placementOf(other) == result.withPartial(axis))
      return other;
  return nullptr;
}

AxisDecision mlir::kina::decideAxis(Operation *op, const ShardingRule &rule,
                                    StringAttr axis, PlacementAttr result,
                                    MeshOp mesh, bool keepASplit) {
  AxisDecision decision;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (std::optional<int64_t> dim =
            placementOf(op->getOperand(i)).getAxisSplitBy(axis))
      decision.claims.push_back({i, rule.operandDims[i][*dim]});
  if (decision.claims.empty())
    return decision;
  int64_t size = *mesh.getAxisSize(axis.getValue());
  auto resultType = cast<KinaTensorType>(op->getResult(0).getType());
  // A value's block: an operand's as placed; the result's as the mesh
  // axes decided so far place it.
  auto sent = [&](Collective kind, Value value) {
    auto type = cast<KinaTensorType>(value.getType());
    if (value == op->getResult(0))
      type = type.withPlacement(result);
    return bytesSentPerDevice(
        kind, ShapedType::getNumElements(blockShape(type, mesh)),
        mlir::kina::dtypeInfo(type.getDType()).bytes, size);
  };
  std::optional<int64_t> wantedDim =
      resultType.getPlacement().isMesh()
          ? resultType.getPlacement().getAxisSplitBy(axis)
          : std::nullopt;
  Value partner = partialSumJoined(op, axis, result);
  // The bytes of keeping `keep` (none: gathering every operand).
  auto cost = [&](std::optional<int64_t> keep) {
    int64_t bytes = 0;
    for (auto [i, factor] : decision.claims)
      if (factor != keep)
        bytes += sent(Collective::AllGather, op->getOperand(i));
    bool partial = keep && *keep >= 0 &&
                   rule.factors[*keep] == ShardingRule::Kind::Contracting;
    // A partial result is reduced later, once with its partner if it
    // joins one; a whole result makes the partner be reduced on its own.
    if (partial && !partner)
      bytes += sent(wantedDim ? Collective::ReduceScatter
                              : Collective::AllReduce,
                    op->getResult(0));
    if (!partial && partner)
      bytes += sent(Collective::AllReduce, partner);
    if (!partial && keep && wantedDim && rule.resultDims[*wantedDim] != *keep)
      bytes += sent(Collective::AllToAll, op->getResult(0));
    return bytes;
  };
  std::optional<int64_t> keep = decision.claims.front().second;
  std::set<int64_t> weighed;
  for (auto [i, factor] : decision.claims) {
    if (cost(factor) < cost(keep))
      keep = factor;
    if (weighed.insert(factor).second)
      decision.weighed.push_back(
          {"keeping operand #" + std::to_string(i) + "'s split",
           cost(factor)});
  }
  decision.weighed.push_back({"gathering every operand", cost(std::nullopt)});
  if (!keepASplit && cost(std::nullopt) < cost(keep))
    keep = std::nullopt;
  decision.keep = keep;
  decision.chosenBytes = cost(keep);
  if (!keep)
    return decision;
  decision.resultDim = rule.resultDimOf(*keep);
  decision.keepable = !decision.resultDim ||
                      resultType.getDimSize(*decision.resultDim) % size == 0;
  for (unsigned i = 0; decision.keepable && i < op->getNumOperands(); ++i) {
    // Operands that split another factor over the axis are gathered
    // first, which frees the axis for them.
    if (llvm::any_of(decision.claims, [&](auto claim) {
          return claim.first == i && claim.second != *keep;
        }))
      continue;
    std::optional<int64_t> dim = rule.operandDimOf(i, *keep);
    PlacementAttr placement = placementOf(op->getOperand(i));
    if (dim && placement.getSplitOf(*dim) != axis)
      decision.keepable =
          !placement.getSplitOf(*dim) && !placement.getAxisSplitBy(axis) &&
          cast<KinaTensorType>(op->getOperand(i).getType()).getDimSize(*dim) %
                  size ==
              0;
  }
  return decision;
}
