//===- SplitReductions.cpp - Reductions over a split axis -----------------===//
//
// softmax(x) (or log_softmax, max, mean) along an axis split over N
// devices gathers the whole axis if placed like any blocked op: for the
// vocabulary-split logits of a language model that is the logits. Viewed as [N,
// block], the axis reduces in two steps: within a block (local to a device) and
// across the N blocks (one value per row and device, which the propagation
// moves). The max is exact, so every row's shift is the unsharded one; the sum
// of exponentials is reordered (equal to float32 rounding, as docs/language.md
// promises of split reductions).
//
//===----------------------------------------------------------------------===//

#include "Kina/Sharding/SplitReductions.h"

using namespace mlir;
using namespace mlir::kina;

namespace {
/// Builds ops typed by their shape rules, remembering them in order.
class Expansion {
public:
  Expansion(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  template <typename OpTy, typename... Args> Value make(Args &&...args) {
    auto op = createInferred<OpTy>(b, loc, std::forward<Args>(args)...);
    if (!op)
      return Value();
    built.push_back(op);
    return op->getResult(0);
  }

  /// `value` broadcast to `like`'s shape.
  Value spread(Value value, Value like) {
    return make<BroadcastOp>(value,
                             cast<KinaTensorType>(like.getType()).getShape());
  }

  /// A replicated literal of `like`'s element type broadcast to its shape.
  Value filled(double v, Value like) {
    Type element = cast<KinaTensorType>(like.getType()).getElementType();
    auto scalar = ConstantOp::create(
        b, loc,
        KinaTensorType::get(b.getContext(), {}, element,
                            PlacementAttr::getReplicated(b.getContext())),
        FloatAttr::get(element, v));
    built.push_back(scalar);
    return spread(scalar, like);
  }

  SmallVector<Operation *> built;

private:
  OpBuilder &b;
  Location loc;
};
} // namespace

/// The devices that split `axis` of `value`, or 0 when it is whole.
static int64_t devicesSplitting(Value value, int64_t axis, MeshOp mesh) {
  PlacementAttr placement =
      cast<KinaTensorType>(value.getType()).getPlacement();
  StringAttr over =
      placement.isMesh() ? placement.getSplitOf(axis) : StringAttr();
  return over ? *mesh.getAxisSize(over.getValue()) : 0;
}

/// `value`'s shape with `axis` viewed as [devices, block].
static SmallVector<int64_t> blockView(Value value, int64_t axis,
                                      int64_t devices) {
  SmallVector<int64_t> shape(cast<KinaTensorType>(value.getType()).getShape());
  int64_t block = shape[axis] / devices;
  shape[axis] = devices;
  shape.insert(shape.begin() + axis + 1, block);
  return shape;
}

/// Whether `op`'s result may keep `axis` split: an annotation that wants
/// it whole is served cheaper by gathering the input (the same bytes,
/// without the statistics).
static bool resultMayStaySplit(Operation *op, int64_t axis) {
  PlacementAttr wanted =
      cast<KinaTensorType>(op->getResult(0).getType()).getPlacement();
  return wanted.isAuto() || wanted.getSplitOf(axis);
}

/// softmax or log_softmax of `x` along `axis`, split over `devices`.
static Value normalizeFromStatistics(Expansion &e, Value x, int64_t axis,
                                     int64_t devices, bool logarithm) {
  auto type = cast<KinaTensorType>(x.getType());
  Value viewed = e.make<ReshapeOp>(x, blockView(x, axis, devices));
  // The exact max: each block's, then the devices'.
  Value blockMax = e.make<MaxOp>(viewed, axis + 1);
  Value rowMax = blockMax ? e.make<MaxOp>(blockMax, axis) : Value();
  Value shifted =
      rowMax ? e.make<SubOp>(viewed, e.spread(rowMax, viewed)) : Value();
  Value exps = shifted ? e.make<ExpOp>(shifted) : Value();
  Value blockSum = exps ? e.make<SumOp>(exps, axis + 1) : Value();
  Value rowSum = blockSum ? e.make<SumOp>(blockSum, axis) : Value();
  if (!rowSum)
    return Value();
  Value normalized =
      logarithm
          ? e.make<SubOp>(shifted, e.spread(e.make<LogOp>(rowSum), viewed))
          : e.make<DivOp>(exps, e.spread(rowSum, viewed));
  return normalized ? e.make<ReshapeOp>(normalized, type.getShape()) : Value();
}

/// `mean` as its sum over the axis divided by the count: what each
/// device can compute from its block's partial sum.
static Value sumOverCount(Expansion &e, MeanOp mean) {
  Value sum = e.make<SumOp>(mean.getInput(), mean.getAxis());
  int64_t count = cast<KinaTensorType>(mean.getInput().getType())
                      .getDimSize(mean.getAxis());
  return sum ? e.make<DivOp>(sum, e.filled(float(count), sum)) : Value();
}

SmallVector<Operation *> mlir::kina::meanAsSum(OpBuilder &builder,
                                               MeanOp mean) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(mean);
  Expansion e(builder, mean.getLoc());
  if (!sumOverCount(e, mean)) {
    for (Operation *made : llvm::reverse(e.built))
      made->erase();
    return {};
  }
  return e.built;
}

SmallVector<Operation *> mlir::kina::expandOverSplitAxis(OpBuilder &builder,
                                                         Operation *op,
                                                         MeshOp mesh) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(op);
  Expansion e(builder, op->getLoc());
  Value result;
  if (auto softmax = dyn_cast<SoftmaxOp>(op)) {
    int64_t axis = softmax.getAxis();
    if (int64_t n = devicesSplitting(softmax.getInput(), axis, mesh);
        n && resultMayStaySplit(op, axis))
      result = normalizeFromStatistics(e, softmax.getInput(), axis, n, false);
  } else if (auto logSoftmax = dyn_cast<LogSoftmaxOp>(op)) {
    int64_t axis = logSoftmax.getAxis();
    if (int64_t n = devicesSplitting(logSoftmax.getInput(), axis, mesh);
        n && resultMayStaySplit(op, axis))
      result = normalizeFromStatistics(e, logSoftmax.getInput(), axis, n, true);
  } else if (auto max = dyn_cast<MaxOp>(op)) {
    int64_t axis = max.getAxis();
    if (int64_t n = devicesSplitting(max.getInput(), axis, mesh)) {
      Value viewed =
          e.make<ReshapeOp>(max.getInput(), blockView(max.getInput(), axis, n));
      Value blockMax = viewed ? e.make<MaxOp>(viewed, axis + 1) : Value();
      Value rowMax = blockMax ? e.make<MaxOp>(blockMax, axis) : Value();
      if (rowMax)
        result = e.make<ReshapeOp>(
            rowMax, cast<KinaTensorType>(max.getType()).getShape());
    }
  } else if (auto mean = dyn_cast<MeanOp>(op)) {
    if (devicesSplitting(mean.getInput(), mean.getAxis(), mesh))
      result = sumOverCount(e, mean);
  }
  if (!result) {
    for (Operation *made : llvm::reverse(e.built))
      made->erase();
    return {};
  }
  return e.built;
}
