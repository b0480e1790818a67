//===- Compute.cpp - constant, matmul, softmax, elementwise ---------------===//
//
// Matmul of any rank is a linalg (batch) matmul with the batch dims
// collapsed into one; softmax is the max-subtracted form written as
// reductions and generics; integer division is total (x / 0 = 0). On
// 16-bit floats, matmuls, reductions, softmax and the math functions
// compute in f32 and round once; casts round to nearest even.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "Kina/Conversion/KinaToLinalg.h"
#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::kina;
using namespace mlir::kina::detail;

namespace {

struct ConstantLowering : KinaPattern<ConstantOp> {
  using KinaPattern::KinaPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::get(resultType(op), op.getValueAttr()));
    return success();
  }
};

struct CastLowering : KinaPattern<CastOp> {
  using KinaPattern::KinaPattern;
  LogicalResult
  matchAndRewrite(CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       convertTensor(rewriter, op.getLoc(), adaptor.getInput(),
                                     resultType(op).getElementType()));
    return success();
  }
};

struct MatmulLowering : KinaPattern<MatmulOp> {
  using KinaPattern::KinaPattern;

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = this->resultType(op);
    // 16-bit operands widened, the product in f32, rounded once; BF16's K
    // in vdpbf16ps's pair order (docs/language.md).
    Type element = computeType(resultType);
    RankedTensorType type = resultType.clone(element);
    int64_t rank = type.getRank();
    auto widen = [&](Value operand, int64_t kDim) {
      if (cast<RankedTensorType>(operand.getType()).getElementType().isBF16())
        return widenInBF16PairOrder(rewriter, loc, operand, kDim);
      return convertTensor(rewriter, loc, operand, element);
    };
    Value lhs = widen(adaptor.getLhs(), rank - 1);
    Value rhs = widen(adaptor.getRhs(), rank - 2);
    auto replace = [&](Value product) {
      rewriter.replaceOp(op, convertTensor(rewriter, loc, product,
                                           resultType.getElementType()));
    };
    auto zeroed = [&](RankedTensorType t) {
      return filledTensor(rewriter, loc, t,
                          rewriter.getZeroAttr(t.getElementType()));
    };
    auto matmul2d = [&](Value a, Value b, RankedTensorType t) {
      return linalg::MatmulOp::create(rewriter, loc, TypeRange{t},
                                      ValueRange{a, b}, ValueRange{zeroed(t)})
          .getResult(0);
    };
    if (rank == 2) {
      replace(matmul2d(lhs, rhs, type));
      return success();
    }
    // [b..., M, K] @ [b..., K, N]: one batch dim for linalg.batch_matmul.
    auto groups = collapseLeading(rank, 2);
    auto collapse = [&](Value v) -> Value {
      return rank == 3 ? v
                       : Value(tensor::CollapseShapeOp::create(rewriter, loc, v,
                                                               groups));
    };
    Value lhs3 = collapse(lhs), rhs3 = collapse(rhs);
    auto lhs3Type = cast<RankedTensorType>(lhs3.getType());
    auto rhs3Type = cast<RankedTensorType>(rhs3.getType());
    auto type3 =
        RankedTensorType::get({lhs3Type.getDimSize(0), lhs3Type.getDimSize(1),
                               rhs3Type.getDimSize(2)},
                              type.getElementType());
    Value product = linalg::BatchMatmulOp::create(
                        rewriter, loc, TypeRange{type3}, ValueRange{lhs3, rhs3},
                        ValueRange{zeroed(type3)})
                        .getResult(0);
    if (rank > 3)
      product =
          tensor::ExpandShapeOp::create(rewriter, loc, type, product, groups);
    replace(product);
    return success();
  }
};

/// softmax(x) = e / sum(e) with e = exp(x - max(x)) along `axis`;
/// log_softmax(x) = (x - max(x)) - log(sum(e)).
template <typename Op> struct SoftmaxLowering : KinaPattern<Op> {
  using KinaPattern<Op>::KinaPattern;
  static constexpr bool isLog = std::is_same_v<Op, LogSoftmaxOp>;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = this->resultType(op);
    Type f32 = computeType(resultType);
    RankedTensorType type = resultType.clone(f32);
    int64_t axis = op.getAxis();
    Value input = convertTensor(rewriter, loc, adaptor.getInput(), f32);
    MLIRContext *context = rewriter.getContext();
    auto replace = [&](Value result) {
      rewriter.replaceOp(op, convertTensor(rewriter, loc, result,
                                           resultType.getElementType()));
    };

    SmallVector<int64_t> reducedShape;
    SmallVector<AffineExpr> reducedExprs;
    for (auto [d, dim] : llvm::enumerate(type.getShape())) {
      if (int64_t(d) == axis)
        continue;
      reducedShape.push_back(dim);
      reducedExprs.push_back(rewriter.getAffineDimExpr(d));
    }
    auto reducedType = RankedTensorType::get(reducedShape, f32);
    auto reducedMap = AffineMap::get(type.getRank(), 0, reducedExprs, context);
    auto identity = rewriter.getMultiDimIdentityMap(type.getRank());

    auto reduce = [&](Value source, TypedAttr init, auto combine) {
      return linalg::ReduceOp::create(
                 rewriter, loc, ValueRange{source},
                 ValueRange{filledTensor(rewriter, loc, reducedType, init)},
                 ArrayRef<int64_t>{axis},
                 [&](OpBuilder &b, Location l, ValueRange args) {
                   linalg::YieldOp::create(b, l,
                                           ValueRange{combine(b, l, args)});
                 })
          .getResult(0);
    };
    // maximumf propagates NaN, as IEEE and NumPy do.
    Value max = reduce(
        input,
        rewriter.getFloatAttr(f32, -std::numeric_limits<float>::infinity()),
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::MaximumFOp::create(b, l, args[0], args[1]);
        });
    Value exps = parallelGeneric(
        rewriter, loc, type, ValueRange{input, max}, {identity, reducedMap},
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return math::ExpOp::create(
              b, l, arith::SubFOp::create(b, l, args[0], args[1]));
        });
    Value sums = reduce(exps, rewriter.getFloatAttr(f32, 0.0),
                        [](OpBuilder &b, Location l, ValueRange args) -> Value {
                          return arith::AddFOp::create(b, l, args[0], args[1]);
                        });
    if constexpr (isLog) {
      replace(parallelGeneric(
          rewriter, loc, type, ValueRange{input, max, sums},
          {identity, reducedMap, reducedMap},
          [](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value shifted = arith::SubFOp::create(b, l, args[0], args[1]);
            return arith::SubFOp::create(b, l, shifted,
                                         math::LogOp::create(b, l, args[2]));
          }));
      return success();
    }
    replace(parallelGeneric(
        rewriter, loc, type, ValueRange{exps, sums}, {identity, reducedMap},
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::DivFOp::create(b, l, args[0], args[1]);
        }));
    return success();
  }
};

/// An elementwise op whose element is `scalar` of its operands'.
template <typename Op, Value (*scalar)(OpBuilder &, Location, ValueRange)>
struct ScalarLowering : KinaPattern<Op> {
  using KinaPattern<Op>::KinaPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, elementwiseGeneric(rewriter, op.getLoc(),
                                              this->resultType(op),
                                              adaptor.getOperands(), scalar));
    return success();
  }
};

static Value zeroLike(OpBuilder &b, Location l, Value like) {
  return arith::ConstantOp::create(b, l, b.getZeroAttr(like.getType()));
}

/// 1.0 where `predicate` holds (ordered: NaN compares false), else 0.0.
template <arith::CmpFPredicate predicate>
static Value compareMask(OpBuilder &b, Location l, ValueRange args) {
  Value holds = arith::CmpFOp::create(b, l, predicate, args[0], args[1]);
  return arith::UIToFPOp::create(b, l, args[0].getType(), holds);
}

/// on_true where the mask is not 0.0 (unordered: a NaN mask chooses it).
static Value selectByMask(OpBuilder &b, Location l, ValueRange args) {
  Value chosen = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE,
                                       args[0], zeroLike(b, l, args[0]));
  return arith::SelectOp::create(b, l, chosen, args[1], args[2]);
}

/// -x: negf flips the sign bit of floats (-0.0 and -NaN stay exact);
/// integers wrap (0 - x).
static Value negate(OpBuilder &b, Location l, ValueRange args) {
  if (isa<FloatType>(args[0].getType()))
    return arith::NegFOp::create(b, l, args[0]);
  return arith::SubIOp::create(b, l, zeroLike(b, l, args[0]), args[0]);
}

/// max(x, 0); maximumf propagates NaN.
static Value relu(OpBuilder &b, Location l, ValueRange args) {
  return arith::MaximumFOp::create(b, l, args[0], zeroLike(b, l, args[0]));
}

/// one_hot: 1.0 where the last index equals the id (widened to i64, so an
/// id outside [0, classes) matches nothing), else 0.0.
struct OneHotLowering : KinaPattern<OneHotOp> {
  using KinaPattern::KinaPattern;
  LogicalResult
  matchAndRewrite(OneHotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    int64_t rank = type.getRank();
    SmallVector<AffineExpr> idExprs;
    for (int64_t d = 0; d + 1 < rank; ++d)
      idExprs.push_back(rewriter.getAffineDimExpr(d));
    auto idMap = AffineMap::get(rank, 0, idExprs, rewriter.getContext());
    rewriter.replaceOp(
        op, parallelGeneric(
                rewriter, op.getLoc(), type, adaptor.getIds(), {idMap},
                [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                  Value id = args[0];
                  if (!id.getType().isInteger(64))
                    id = arith::ExtSIOp::create(b, l, b.getI64Type(), id);
                  Value index = arith::IndexCastOp::create(
                      b, l, b.getI64Type(),
                      linalg::IndexOp::create(b, l, rank - 1));
                  Value hit = arith::CmpIOp::create(
                      b, l, arith::CmpIPredicate::eq, index, id);
                  return arith::UIToFPOp::create(b, l, type.getElementType(),
                                                 hit);
                }));
    return success();
  }
};

/// Integer division that is defined everywhere: truncates toward zero,
/// x / 0 = 0 and MIN / -1 = MIN (both would be undefined, even a trap).
static Value totalSignedDivision(OpBuilder &b, Location loc, Value lhs,
                                 Value rhs) {
  Type type = lhs.getType();
  unsigned width = type.getIntOrFloatBitWidth();
  auto constant = [&](APInt value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
  };
  Value zero = constant(APInt(width, 0));
  Value one = constant(APInt(width, 1));
  Value minusOne = constant(APInt::getAllOnes(width));
  Value min = constant(APInt::getSignedMinValue(width));
  auto eq = [&](Value a, Value c) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a, c);
  };
  Value byZero = eq(rhs, zero);
  Value overflow =
      arith::AndIOp::create(b, loc, eq(lhs, min), eq(rhs, minusOne));
  Value safeRhs = arith::SelectOp::create(
      b, loc, arith::OrIOp::create(b, loc, byZero, overflow), one, rhs);
  Value quotient = arith::DivSIOp::create(b, loc, lhs, safeRhs);
  return arith::SelectOp::create(b, loc, byZero, zero, quotient);
}

template <typename Op, typename FloatOp, typename IntOp>
struct ElementwiseLowering : KinaPattern<Op> {
  using KinaPattern<Op>::KinaPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = this->resultType(op);
    bool isFloat = isa<FloatType>(type.getElementType());
    rewriter.replaceOp(
        op, elementwiseGeneric(
                rewriter, op.getLoc(), type, adaptor.getOperands(),
                [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                  if (isFloat)
                    return FloatOp::create(b, l, args[0], args[1]);
                  if constexpr (std::is_same_v<IntOp, arith::DivSIOp>)
                    return totalSignedDivision(b, l, args[0], args[1]);
                  else
                    return IntOp::create(b, l, args[0], args[1]);
                }));
    return success();
  }
};

/// sum, mean, max along `axis`: a linalg.reduce, then the axis back with
/// size 1. max uses maximumf (NaN propagates, as NumPy's max); mean
/// divides the sum by the axis size.
template <typename Op> struct AxisReductionLowering : KinaPattern<Op> {
  using KinaPattern<Op>::KinaPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = this->resultType(op);
    Type f32 = computeType(resultType);
    RankedTensorType type = resultType.clone(f32);
    Value source = convertTensor(rewriter, loc, adaptor.getInput(), f32);
    auto input = cast<RankedTensorType>(source.getType());
    int64_t axis = op.getAxis();
    SmallVector<int64_t> reducedShape;
    for (auto [d, dim] : llvm::enumerate(input.getShape()))
      if (int64_t(d) != axis)
        reducedShape.push_back(dim);
    auto reducedType = RankedTensorType::get(reducedShape, f32);
    constexpr bool isMax = std::is_same_v<Op, MaxOp>;
    TypedAttr init = rewriter.getFloatAttr(
        f32, isMax ? -std::numeric_limits<float>::infinity() : 0.0);
    Value reduced =
        linalg::ReduceOp::create(
            rewriter, loc, ValueRange{source},
            ValueRange{filledTensor(rewriter, loc, reducedType, init)},
            ArrayRef<int64_t>{axis},
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value combined =
                  isMax ? arith::MaximumFOp::create(b, l, args[0], args[1])
                              .getResult()
                        : arith::AddFOp::create(b, l, args[0], args[1])
                              .getResult();
              linalg::YieldOp::create(b, l, combined);
            })
            .getResult(0);
    if constexpr (std::is_same_v<Op, MeanOp>) {
      Value count = arith::ConstantOp::create(
          rewriter, loc,
          rewriter.getFloatAttr(f32, double(input.getDimSize(axis))));
      reduced = elementwiseGeneric(
          rewriter, loc, reducedType, reduced,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            return arith::DivFOp::create(b, l, args[0], count);
          });
    }
    // The reduced dims, the unit axis joining its neighbour's group.
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis)
        groups.push_back({d});
    if (!groups.empty()) {
      if (axis == 0)
        groups.front().insert(groups.front().begin(), 0);
      else
        groups[axis - 1].push_back(axis);
    }
    Value expanded =
        tensor::ExpandShapeOp::create(rewriter, loc, type, reduced, groups);
    rewriter.replaceOp(op, convertTensor(rewriter, loc, expanded,
                                         resultType.getElementType()));
    return success();
  }
};

/// exp, log, sqrt, rsqrt, tanh, abs: the math dialect's op on every
/// element (of a 16-bit float: in f32, rounded once).
template <typename Op, typename MathOp>
struct UnaryMathLowering : KinaPattern<Op> {
  using KinaPattern<Op>::KinaPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = this->resultType(op);
    Type element = type.getElementType(), compute = computeType(type);
    rewriter.replaceOp(
        op, elementwiseGeneric(
                rewriter, op.getLoc(), type, adaptor.getInput(),
                [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                  Value x = convertScalar(b, l, args[0], compute);
                  return convertScalar(b, l, MathOp::create(b, l, x), element);
                }));
    return success();
  }
};

} // namespace

void mlir::kina::populateKinaComputeToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<
      ConstantLowering, CastLowering, MatmulLowering,
      SoftmaxLowering<SoftmaxOp>, SoftmaxLowering<LogSoftmaxOp>, OneHotLowering,
      ScalarLowering<NegOp, negate>,
      ScalarLowering<EqualOp, compareMask<arith::CmpFPredicate::OEQ>>,
      ScalarLowering<LessOp, compareMask<arith::CmpFPredicate::OLT>>,
      ScalarLowering<LessEqualOp, compareMask<arith::CmpFPredicate::OLE>>,
      ScalarLowering<GreaterOp, compareMask<arith::CmpFPredicate::OGT>>,
      ScalarLowering<GreaterEqualOp, compareMask<arith::CmpFPredicate::OGE>>,
      ScalarLowering<SelectOp, selectByMask>, ScalarLowering<ReluOp, relu>,
      ElementwiseLowering<MaximumOp, arith::MaximumFOp, arith::MaxSIOp>,
      ElementwiseLowering<MinimumOp, arith::MinimumFOp, arith::MinSIOp>,
      ElementwiseLowering<AddOp, arith::AddFOp, arith::AddIOp>,
      ElementwiseLowering<SubOp, arith::SubFOp, arith::SubIOp>,
      ElementwiseLowering<MulOp, arith::MulFOp, arith::MulIOp>,
      ElementwiseLowering<DivOp, arith::DivFOp, arith::DivSIOp>,
      AxisReductionLowering<SumOp>, AxisReductionLowering<MeanOp>,
      AxisReductionLowering<MaxOp>, UnaryMathLowering<ExpOp, math::ExpOp>,
      UnaryMathLowering<LogOp, math::LogOp>,
      UnaryMathLowering<SqrtOp, math::SqrtOp>,
      UnaryMathLowering<RsqrtOp, math::RsqrtOp>,
      UnaryMathLowering<TanhOp, math::TanhOp>,
      UnaryMathLowering<AbsOp, math::AbsFOp>>(converter, patterns.getContext());
}

void mlir::kina::populateKinaToLinalgPatterns(TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  populateKinaDataMovementToLinalgPatterns(converter, patterns);
  populateKinaComputeToLinalgPatterns(converter, patterns);
  populateKinaCollectivesToRuntimePatterns(converter, patterns);
}
