//===- Strategies.cpp - The ways one op or one value can be placed --------===//

#include "Kina/AutoShard/Strategies.h"

#include "Kina/Sharding/Reshard.h"

using namespace mlir;
using namespace mlir::kina;

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<KinaTensorType>(value.getType()).getShape();
}

/// Whether every dim that is `factor` (in the operands and the result)
/// divides by `size`.
static bool divides(Operation *op, const ShardingRule &rule, int64_t factor,
                    int64_t size) {
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (std::optional<int64_t> dim = rule.operandDimOf(i, factor))
      if (shapeOf(op->getOperand(i))[*dim] % size != 0)
        return false;
  if (std::optional<int64_t> dim = rule.resultDimOf(factor))
    if (shapeOf(op->getResult(0))[*dim] % size != 0)
      return false;
  return true;
}

SmallVector<Strategy> mlir::kina::enumerateStrategies(Operation *op,
                                                      const ShardingRule &rule,
                                                      MeshOp mesh) {
  SmallVector<StringAttr> axes = axesInNameOrder(mesh);
  // Each mesh axis takes one splittable factor, or none (-1).
  SmallVector<SmallVector<int64_t>> candidates;
  for (StringAttr axis : axes) {
    int64_t size = *mesh.getAxisSize(axis.getValue());
    SmallVector<int64_t> factors = {-1};
    for (auto [factor, kind] : llvm::enumerate(rule.factors)) {
      if (kind == ShardingRule::Kind::Blocked)
        continue;
      // A parallel factor the result does not have cannot be split (its
      // blocks would have nowhere to go).
      if (kind == ShardingRule::Kind::Parallel && !rule.resultDimOf(factor))
        continue;
      if (divides(op, rule, factor, size))
        factors.push_back(factor);
    }
    candidates.push_back(std::move(factors));
  }
  MLIRContext *context = op->getContext();
  SmallVector<Strategy> strategies;
  SmallVector<int64_t> choice(axes.size(), 0);
  while (true) {
    SmallVector<int64_t> assigned = llvm::map_to_vector(
        llvm::enumerate(choice),
        [&](auto pair) { return candidates[pair.index()][pair.value()]; });
    // One factor per mesh axis and one mesh axis per factor.
    SmallVector<int64_t> used;
    bool distinct = true;
    for (int64_t factor : assigned)
      if (factor >= 0) {
        distinct &= !llvm::is_contained(used, factor);
        used.push_back(factor);
      }
    if (distinct) {
      Strategy strategy;
      strategy.result = PlacementAttr::getReplicated(context);
      strategy.operands.assign(op->getNumOperands(), strategy.result);
      std::string text;
      for (auto [axis, factor] : llvm::zip(axes, assigned)) {
        if (factor < 0)
          continue;
        strategy.ways *= *mesh.getAxisSize(axis.getValue());
        for (unsigned i = 0; i < op->getNumOperands(); ++i)
          if (std::optional<int64_t> dim = rule.operandDimOf(i, factor))
            strategy.operands[i] = strategy.operands[i].withSplit(*dim, axis);
        if (std::optional<int64_t> dim = rule.resultDimOf(factor))
          strategy.result = strategy.result.withSplit(*dim, axis);
        else
          strategy.result = strategy.result.withPartial(axis);
        text += (text.empty() ? "" : ", ") +
                (rule.factors[factor] == ShardingRule::Kind::Contracting
                     ? std::string("contracting ")
                     : std::string()) +
                "factor " + std::to_string(factor) + " over " +
                axis.getValue().str();
      }
      strategy.text = text.empty() ? "replicated" : text;
      strategies.push_back(strategy);
      // An op that passes partial sums may also run on summands over the
      // axes no factor takes: its operands and result partial over them.
      if (passesPartialSums(op)) {
        SmallVector<StringAttr> free;
        for (auto [axis, factor] : llvm::zip(axes, assigned))
          if (factor < 0)
            free.push_back(axis);
        for (unsigned subset = 1; subset < (1u << free.size()); ++subset) {
          Strategy partial = strategy;
          std::string over;
          for (auto [bit, axis] : llvm::enumerate(free)) {
            if (!(subset & (1u << bit)))
              continue;
            for (PlacementAttr &operand : partial.operands)
              operand = operand.withPartial(axis);
            partial.result = partial.result.withPartial(axis);
            over += (over.empty() ? "" : ", ") + axis.getValue().str();
          }
          partial.text = (text.empty() ? "" : text + ", ") +
                         "summands over " + over;
          strategies.push_back(std::move(partial));
        }
      }
    }
    // The next choice, the last mesh axis fastest.
    int64_t a = static_cast<int64_t>(axes.size()) - 1;
    while (a >= 0 && ++choice[a] == static_cast<int64_t>(candidates[a].size()))
      choice[a--] = 0;
    if (a < 0)
      break;
  }
  return strategies;
}

SmallVector<PlacementAttr> mlir::kina::enumeratePlacements(KinaTensorType type,
                                                           MeshOp mesh) {
  SmallVector<PlacementAttr> placements = {
      PlacementAttr::getReplicated(type.getContext())};
  for (StringAttr axis : axesInNameOrder(mesh)) {
    int64_t size = *mesh.getAxisSize(axis.getValue());
    SmallVector<PlacementAttr> more;
    for (PlacementAttr placement : placements)
      for (int64_t dim = 0; dim < type.getRank(); ++dim)
        if (!placement.getSplitOf(dim) && type.getDimSize(dim) % size == 0)
          more.push_back(placement.withSplit(dim, axis));
    placements.append(more);
  }
  return placements;
}
