//===- Folds.cpp - Folders of the kina ops --------------------------------===//
//
// Folds that remove an op or rewrite it in place: casts to the same type,
// full-range slices, slice of slice on one axis, single-operand concat,
// reshape of reshape, transpose of transpose, broadcast to the operand's
// own shape, reshard to the same type or of a reshard, all_slice of
// all_gather (and back) on one axis, all_to_all there and back,
// collectives over a mesh axis of one device.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::kina;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

/// A cast to the type the operand has already.
OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // slice(slice(x)) on the same axis reads one range of x.
  auto inner = getInput().getDefiningOp<SliceOp>();
  if (!inner || inner.getAxis() != getAxis())
    return {};
  Builder b(getContext());
  int64_t offset = inner.getStart();
  getInputMutable().assign(inner.getInput());
  setStartAttr(b.getI64IntegerAttr(getStart() + offset));
  setStopAttr(b.getI64IntegerAttr(getStop() + offset));
  return getResult();
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

OpFoldResult BroadcastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

/// Over an axis of size 1 a reduction is its operand (same type).
template <typename Op> static OpFoldResult foldUnitReduction(Op op) {
  if (op.getInput().getType() == op.getType())
    return op.getInput();
  return {};
}
OpFoldResult SumOp::fold(FoldAdaptor) { return foldUnitReduction(*this); }
OpFoldResult MeanOp::fold(FoldAdaptor) { return foldUnitReduction(*this); }
OpFoldResult MaxOp::fold(FoldAdaptor) { return foldUnitReduction(*this); }

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // Row-major order is kept by each reshape, so two make one.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPerm();
  auto isIdentity = [](ArrayRef<int64_t> p) {
    for (auto [i, v] : llvm::enumerate(p))
      if (int64_t(i) != v)
        return false;
    return true;
  };
  if (isIdentity(perm))
    return getInput();
  auto inner = getInput().getDefiningOp<TransposeOp>();
  if (!inner)
    return {};
  // result[i] = inner.input[innerPerm[perm[i]]]
  SmallVector<int64_t> composed;
  for (int64_t p : perm)
    composed.push_back(inner.getPerm()[p]);
  if (isIdentity(composed))
    return inner.getInput();
  getInputMutable().assign(inner.getInput());
  setPermAttr(DenseI64ArrayAttr::get(getContext(), composed));
  return getResult();
}

OpFoldResult ReshardOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // Only the last placement matters.
  if (auto inner = getInput().getDefiningOp<ReshardOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

/// True when mesh axis `over` of the module's mesh has one device.
static bool overOneDevice(Operation *op, StringRef over) {
  MeshOp mesh = MeshOp::lookup(op);
  std::optional<int64_t> size = mesh ? mesh.getAxisSize(over) : std::nullopt;
  return size && *size == 1;
}

/// A collective over one device moves nothing: its operand, when the
/// types agree (the per-device view; see the canonicalization otherwise).
template <typename OpT> static OpFoldResult foldOverOneDevice(OpT op) {
  if (op.getInput().getType() == op.getType() &&
      overOneDevice(op, op.getOver()))
    return op.getInput();
  return {};
}

/// `gather(slice(x))` and `slice(gather(x))` on one axis and mesh axis.
template <typename OpT, typename InverseT>
static OpFoldResult foldInverse(OpT op) {
  auto inverse = op.getInput().template getDefiningOp<InverseT>();
  if (inverse && inverse.getAxis() == op.getAxis() &&
      inverse.getOver() == op.getOver() &&
      inverse.getInput().getType() == op.getType())
    return inverse.getInput();
  return foldOverOneDevice(op);
}

OpFoldResult AllGatherOp::fold(FoldAdaptor) {
  return foldInverse<AllGatherOp, AllSliceOp>(*this);
}
OpFoldResult AllSliceOp::fold(FoldAdaptor) {
  return foldInverse<AllSliceOp, AllGatherOp>(*this);
}
OpFoldResult AllReduceOp::fold(FoldAdaptor) { return foldOverOneDevice(*this); }
OpFoldResult ReduceScatterOp::fold(FoldAdaptor) {
  return foldOverOneDevice(*this);
}
/// A cyclic shift undone by the opposite one (a non-cyclic pair zeroes
/// the ends, so it stays).
OpFoldResult PermuteOp::fold(FoldAdaptor) {
  auto inverse = getInput().getDefiningOp<PermuteOp>();
  if (inverse && getCyclic() && inverse.getCyclic() &&
      static_cast<int64_t>(inverse.getShift()) ==
          -static_cast<int64_t>(getShift()) &&
      inverse.getOver() == getOver() &&
      inverse.getInput().getType() == getType())
    return inverse.getInput();
  return {};
}
/// A split moved from one axis to another and back is where it was.
OpFoldResult AllToAllOp::fold(FoldAdaptor) {
  auto inverse = getInput().getDefiningOp<AllToAllOp>();
  if (inverse && inverse.getFrom() == getTo() &&
      inverse.getTo() == getFrom() && inverse.getOver() == getOver() &&
      inverse.getInput().getType() == getType())
    return inverse.getInput();
  return foldOverOneDevice(*this);
}
