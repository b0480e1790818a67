//===- CollectiveRules.cpp - Typing of reshard and the collectives --------===//
//
// A collective changes only the placement of a global (mesh-placed)
// tensor, or, in the per-device view (`@local`), the shape of the local
// block by the size of its mesh axis. Each rule states both.
//
//===----------------------------------------------------------------------===//

#include "RuleContext.h"

#include "Kina/Dialect/KinaDialect.h"

using namespace mlir;
using namespace mlir::kina;
using mlir::kina::detail::RuleContext;

static FailureOr<Type> inferReshard(RuleContext &rule) {
  auto operands = rule.tensors(1);
  if (failed(operands))
    return failure();
  // The result's placement is free (ResultPlacementIsFree).
  return rule.shaped((*operands)[0], (*operands)[0].getShape());
}
KINA_SHAPE_RULE(ReshardOp, inferReshard)

namespace {
/// Whether collective `OpTy` has an `axis` attribute.
template <typename OpTy>
constexpr bool hasAxis =
    !std::is_same_v<OpTy, AllReduceOp> && !std::is_same_v<OpTy, AllToAllOp> &&
    !std::is_same_v<OpTy, PermuteOp>;

/// What every collective rule reads first: the one operand, its mesh axis
/// and that axis's size, and which view the op is in.
struct Collective {
  KinaTensorType input;
  StringAttr over;
  int64_t size;
  bool local;       // the per-device view
  int64_t axis = 0; // the `axis` attribute, for the ops that have one

  /// Reads the operand, `over` and, for an op with one, a checked `axis`.
  template <typename OpTy>
  static FailureOr<Collective> read(RuleContext &rule, StringRef opName) {
    auto operands = rule.tensors(1);
    auto attrs = rule.attributesOf<OpTy>();
    if (failed(operands) || failed(attrs))
      return failure();
    StringAttr over = attrs->getOverAttr();
    int64_t axis = 0;
    if constexpr (hasAxis<OpTy>) {
      axis = attrs->getAxis();
      if (failed(rule.checkAxis(axis, (*operands)[0], "operand")))
        return failure();
    }
    auto size = rule.meshAxisSize(over.getValue());
    if (failed(size))
      return failure();
    KinaTensorType input = (*operands)[0];
    PlacementAttr placement = input.getPlacement();
    if (!placement.isMesh() && !placement.isLocal())
      return rule.error() << opName
                          << " needs a mesh-placed (decided) or per-device "
                             "(@local) operand, got "
                          << placement.str();
    return Collective{input, over, *size, placement.isLocal(), axis};
  }

  PlacementAttr placement() const { return input.getPlacement(); }
  SmallVector<int64_t> shape() const {
    return SmallVector<int64_t>(input.getShape());
  }
  /// `shape[axis] / size`, or an error.
  FailureOr<int64_t> divided(RuleContext &rule, int64_t axis) const {
    int64_t dim = input.getDimSize(axis);
    if (dim % size != 0)
      return rule.error() << "axis " << axis << " of size " << dim
                          << " does not divide by mesh axis '"
                          << over.getValue() << "' of size " << size;
    return dim / size;
  }
  /// Reads as `read`, for ops that cut `axis` into blocks of the mesh
  /// axis (all_slice, reduce_scatter): the shape cut, or an error.
  template <typename OpTy>
  static FailureOr<std::pair<Collective, SmallVector<int64_t>>>
  readCutting(RuleContext &rule, StringRef opName) {
    FailureOr<Collective> c = read<OpTy>(rule, opName);
    if (failed(c))
      return failure();
    auto block = c->divided(rule, c->axis);
    if (failed(block))
      return failure();
    SmallVector<int64_t> cut = c->shape();
    cut[c->axis] = *block;
    return std::make_pair(*c, cut);
  }
  InFlightDiagnostic notSplit(RuleContext &rule, int64_t axis) const {
    return rule.error() << "needs axis " << axis << " split over '"
                        << over.getValue() << "', but the operand is "
                        << placement().str();
  }
  InFlightDiagnostic notPartial(RuleContext &rule) const {
    return rule.error() << "needs an operand partial over '" << over.getValue()
                        << "', but it is " << placement().str();
  }
  /// The mesh axis must not already cut `axis`, nor another axis.
  LogicalResult checkFree(RuleContext &rule, int64_t axis) const {
    if (placement().getSplitOf(axis) || placement().getAxisSplitBy(over) ||
        placement().isPartialOver(over))
      return rule.error() << "cannot cut axis " << axis << " over '"
                          << over.getValue() << "': the operand is "
                          << placement().str();
    return success();
  }
};
} // namespace

static FailureOr<Type> inferAllGather(RuleContext &rule) {
  auto c = Collective::read<AllGatherOp>(rule, "all_gather");
  if (failed(c))
    return failure();
  SmallVector<int64_t> shape = c->shape();
  if (c->local) {
    shape[c->axis] *= c->size;
    return rule.shaped(c->input, shape);
  }
  if (c->placement().getSplitOf(c->axis) != c->over)
    return c->notSplit(rule, c->axis);
  return rule.shaped(c->input, shape, c->placement().withoutSplit(c->axis));
}
KINA_SHAPE_RULE(AllGatherOp, inferAllGather)

static FailureOr<Type> inferAllSlice(RuleContext &rule) {
  auto read = Collective::readCutting<AllSliceOp>(rule, "all_slice");
  if (failed(read))
    return failure();
  auto &[c, cut] = *read;
  if (c.local)
    return rule.shaped(c.input, cut);
  if (failed(c.checkFree(rule, c.axis)))
    return failure();
  return rule.shaped(c.input, c.shape(),
                     c.placement().withSplit(c.axis, c.over));
}
KINA_SHAPE_RULE(AllSliceOp, inferAllSlice)

static FailureOr<Type> inferAllReduce(RuleContext &rule) {
  auto c = Collective::read<AllReduceOp>(rule, "all_reduce");
  if (failed(c))
    return failure();
  ReductionKind kind = rule.attributesOf<AllReduceOp>()->getKind();
  if (c->local)
    return rule.shaped(c->input, c->shape());
  if (kind != ReductionKind::sum)
    return rule.error() << "reduces partial sums in the global view; "
                           "'max' exists on per-device (@local) values only";
  if (!c->placement().isPartialOver(c->over))
    return c->notPartial(rule);
  return rule.shaped(c->input, c->shape(),
                     c->placement().withoutPartial(c->over));
}
KINA_SHAPE_RULE(AllReduceOp, inferAllReduce)

static FailureOr<Type> inferReduceScatter(RuleContext &rule) {
  auto read = Collective::readCutting<ReduceScatterOp>(rule, "reduce_scatter");
  if (failed(read))
    return failure();
  auto &[c, cut] = *read;
  if (c.local)
    return rule.shaped(c.input, cut);
  if (!c.placement().isPartialOver(c.over))
    return c.notPartial(rule);
  PlacementAttr whole = c.placement().withoutPartial(c.over);
  if (whole.getSplitOf(c.axis))
    return rule.error() << "cannot cut axis " << c.axis
                        << ", already split: the operand is "
                        << c.placement().str();
  return rule.shaped(c.input, c.shape(), whole.withSplit(c.axis, c.over));
}
KINA_SHAPE_RULE(ReduceScatterOp, inferReduceScatter)

static FailureOr<Type> inferAllToAll(RuleContext &rule) {
  auto c = Collective::read<AllToAllOp>(rule, "all_to_all");
  if (failed(c))
    return failure();
  auto attrs = rule.attributesOf<AllToAllOp>();
  int64_t from = attrs->getFrom(), to = attrs->getTo();
  if (
      failed(rule.checkAxis(from, c->input, "operand")) ||
      failed(rule.checkAxis(to, c->input, "operand")))
    return failure();
  if (from == to)
    return rule.error() << "moves a split from axis " << from << " to itself";
  SmallVector<int64_t> shape = c->shape();
  auto block = c->divided(rule, to);
  if (failed(block))
    return failure();
  if (c->local) {
    shape[from] *= c->size;
    shape[to] = *block;
    return rule.shaped(c->input, shape);
  }
  if (c->placement().getSplitOf(from) != c->over)
    return c->notSplit(rule, from);
  if (c->placement().getSplitOf(to))
    return rule.error() << "cannot move the split to axis " << to
                        << ": the operand is " << c->placement().str();
  return rule.shaped(
      c->input, shape,
      c->placement().withoutSplit(from).withSplit(to, c->over));
}
KINA_SHAPE_RULE(AllToAllOp, inferAllToAll)

static FailureOr<Type> inferPermute(RuleContext &rule) {
  auto c = Collective::read<PermuteOp>(rule, "permute");
  if (failed(c))
    return failure();
  int64_t shift =
      static_cast<int64_t>(rule.attributesOf<PermuteOp>()->getShift());
  if (!c->local)
    return rule.error() << "moves blocks between devices: it exists on "
                           "per-device (@local) values only";
  if (shift == 0 || shift <= -c->size || shift >= c->size)
    return rule.error() << "shift " << shift << " over '" << c->over.getValue()
                        << "' (size " << c->size
                        << ") must be nonzero and within (-" << c->size << ", "
                        << c->size << ")";
  return rule.shaped(c->input, c->shape());
}
KINA_SHAPE_RULE(PermuteOp, inferPermute)
