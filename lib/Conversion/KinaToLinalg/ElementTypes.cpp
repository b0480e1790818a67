//===- ElementTypes.cpp - Conversions between element types ---------------===//
//
// kina.cast's rounding (to nearest even, once) and the f32 in which ops on
// 16-bit floats accumulate, shared by the compute and data-movement
// lowerings.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"

using namespace mlir;
using namespace mlir::kina::detail;

bool mlir::kina::detail::isNarrowFloat(Type type) {
  auto floatType = dyn_cast<FloatType>(type);
  return floatType && floatType.getWidth() == 16;
}

/// An f64 rounded to f32 to odd: to nearest, then, where that was inexact
/// and landed on an even f32, to its odd neighbour on x's side. Rounding
/// that to a 16-bit float to nearest even rounds as one step from the f64
/// would (f32 has more than 11 + 2 bits).
static Value roundToOddF32(OpBuilder &b, Location l, Value x) {
  Type i32 = b.getI32Type();
  Value nearest = arith::TruncFOp::create(b, l, b.getF32Type(), x);
  Value back = arith::ExtFOp::create(b, l, b.getF64Type(), nearest);
  Value inexact =
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::ONE, back, x);
  Value bits = arith::BitcastOp::create(b, l, i32, nearest);
  auto constant = [&](int32_t v) -> Value {
    return arith::ConstantOp::create(b, l, b.getI32IntegerAttr(v));
  };
  Value even = arith::CmpIOp::create(
      b, l, arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, l, bits, constant(1)), constant(0));
  Value overshot = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                         math::AbsFOp::create(b, l, back),
                                         math::AbsFOp::create(b, l, x));
  Value odd = arith::SelectOp::create(
      b, l, overshot, arith::SubIOp::create(b, l, bits, constant(1)),
      arith::AddIOp::create(b, l, bits, constant(1)));
  Value toOdd = arith::AndIOp::create(b, l, inexact, even);
  return arith::BitcastOp::create(
      b, l, b.getF32Type(), arith::SelectOp::create(b, l, toOdd, odd, bits));
}

/// `x` (a float or a signed integer) as float type `to`, rounded once to
/// nearest even (kina.cast).
Value mlir::kina::detail::convertScalar(OpBuilder &b, Location l, Value x,
                                        Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto toFloat = cast<FloatType>(to);
  if (!isa<FloatType>(from)) {
    if (!isNarrowFloat(to))
      return arith::SIToFPOp::create(b, l, to, x);
    // Exact in f64 up to 2^53, then rounded once.
    return convertScalar(b, l, arith::SIToFPOp::create(b, l, b.getF64Type(), x),
                         to);
  }
  unsigned fromWidth = cast<FloatType>(from).getWidth();
  if (fromWidth == toFloat.getWidth()) // f16 <-> bf16: exact in f32
    return arith::TruncFOp::create(
        b, l, to, arith::ExtFOp::create(b, l, b.getF32Type(), x));
  if (fromWidth < toFloat.getWidth())
    return arith::ExtFOp::create(b, l, to, x);
  if (fromWidth == 64 && isNarrowFloat(to))
    return arith::TruncFOp::create(b, l, to, roundToOddF32(b, l, x));
  return arith::TruncFOp::create(b, l, to, x);
}

/// `tensor` with every element converted to `element` (kina.cast's rule).
Value mlir::kina::detail::convertTensor(OpBuilder &b, Location loc,
                                        Value tensor, Type element) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getElementType() == element)
    return tensor;
  return elementwiseGeneric(
      b, loc, type.clone(element), tensor,
      [&](OpBuilder &nested, Location l, ValueRange args) {
        return convertScalar(nested, l, args[0], element);
      });
}

Value mlir::kina::detail::widenInBF16PairOrder(OpBuilder &b, Location loc,
                                               Value tensor, int64_t kDim) {
  Type f32 = b.getF32Type();
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> shape(type.getShape());
  if (shape[kDim] % 2 != 0) { // vdpbf16ps pairs an odd K's last with 0
    // Padded once widened: a copy of BF16 elements compiles, under
    // AddressSanitizer, to a rounding libcall (__truncsfbf2) that the
    // libc-only .so does not have.
    tensor = convertTensor(b, loc, tensor, f32);
    type = type.clone(f32);
    ++shape[kDim];
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32));
    tensor = tensor::createPadHighOp(type.clone(shape), tensor, zero,
                                     /*nofold=*/false, loc, b);
  }
  // [..., K, ...] as [..., K/2, 2, ...]; the pair's two swapped on the way.
  int64_t rank = type.getRank();
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> paired;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t next = static_cast<int64_t>(paired.size());
    if (d == kDim) {
      groups.push_back({next, next + 1});
      paired.append({shape[d] / 2, 2});
    } else {
      groups.push_back({next});
      paired.push_back(shape[d]);
    }
  }
  auto pairedType = RankedTensorType::get(paired, type.getElementType());
  Value split =
      tensor::ExpandShapeOp::create(b, loc, pairedType, tensor, groups);
  SmallVector<AffineExpr> swapped;
  for (int64_t d = 0; d < rank + 1; ++d)
    swapped.push_back(d == kDim + 1 ? 1 - b.getAffineDimExpr(d)
                                    : b.getAffineDimExpr(d));
  Value widened =
      parallelGeneric(b, loc, pairedType.clone(f32), split,
                      {AffineMap::get(rank + 1, 0, swapped, b.getContext())},
                      [&](OpBuilder &nested, Location l, ValueRange args) {
                        return convertScalar(nested, l, args[0], f32);
                      });
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, f32), widened, groups);
}

/// The f32 in which an op on `type` computes: f32 for 16-bit floats, else
/// `type`'s own element type.
Type mlir::kina::detail::computeType(RankedTensorType type) {
  Type element = type.getElementType();
  return isNarrowFloat(element) ? Float32Type::get(element.getContext())
                                : element;
}
