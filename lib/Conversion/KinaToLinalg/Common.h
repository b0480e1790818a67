//===- Common.h - Helpers shared by the kina lowering patterns --*- C++ -*-===//
#ifndef KINA_LIB_CONVERSION_KINATOLINALG_COMMON_H
#define KINA_LIB_CONVERSION_KINATOLINALG_COMMON_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::kina::detail {

/// A conversion pattern that knows its op's converted result type.
template <typename Op>
struct KinaPattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  RankedTensorType resultType(Op op) const {
    return this->getTypeConverter()->template convertType<RankedTensorType>(
        op.getType());
  }
};

/// A `tensor.empty` of `type`.
inline Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

/// A tensor of `type` filled with `value`.
inline Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                          TypedAttr value) {
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, emptyTensor(b, loc, type))
      .getResult(0);
}

/// A `linalg.generic` over `resultType`'s iteration space, all parallel,
/// whose inputs use `inputMaps` and whose body yields `body(args)`.
inline Value
parallelGeneric(OpBuilder &b, Location loc, RankedTensorType resultType,
                ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, inputs,
             ValueRange{emptyTensor(b, loc, resultType)}, maps, iterators,
             [&](OpBuilder &nested, Location l, ValueRange args) {
               linalg::YieldOp::create(nested, l, body(nested, l, args));
             })
      .getResult(0);
}

/// The same with every input indexed like the result.
inline Value
elementwiseGeneric(OpBuilder &b, Location loc, RankedTensorType resultType,
                   ValueRange inputs,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<AffineMap> maps(inputs.size(),
                              b.getMultiDimIdentityMap(resultType.getRank()));
  return parallelGeneric(b, loc, resultType, inputs, maps, body);
}

/// Whether `type` is a 16-bit float (f16, bf16), whose matmuls,
/// reductions, softmax and math functions compute in f32 and round once.
bool isNarrowFloat(Type type);

/// The element type an op on `type` computes in: f32 for 16-bit floats,
/// else `type`'s own.
Type computeType(RankedTensorType type);

/// `x` (a float or a signed integer) as float type `to`, rounded once to
/// nearest even (kina.cast).
Value convertScalar(OpBuilder &b, Location l, Value x, Type to);

/// `tensor` with every element converted to `element` by convertScalar;
/// `tensor` itself when it has that element type.
Value convertTensor(OpBuilder &b, Location loc, Value tensor, Type element);

/// A BF16 `tensor` widened to f32 with dim `kDim` (a matmul's K, padded
/// with a zero when odd) in the order vdpbf16ps adds each pair: element
/// 2i + 1, then 2i. A product that then accumulates over K in K's order
/// adds what vdpbf16ps adds, in its order.
Value widenInBF16PairOrder(OpBuilder &b, Location loc, Value tensor,
                           int64_t kDim);

/// Reassociation that merges the first `rank - keep` dims into one group
/// and keeps the last `keep` dims as their own groups.
inline SmallVector<ReassociationIndices> collapseLeading(int64_t rank,
                                                         int64_t keep) {
  SmallVector<ReassociationIndices> groups(1);
  for (int64_t d = 0; d < rank - keep; ++d)
    groups[0].push_back(d);
  for (int64_t d = rank - keep; d < rank; ++d) {
    if (groups.back().empty())
      groups.back().push_back(d);
    else
      groups.push_back({d});
  }
  return groups;
}

} // namespace mlir::kina::detail

#endif // KINA_LIB_CONVERSION_KINATOLINALG_COMMON_H
