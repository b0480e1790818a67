//===- NarrowFloats.cpp - f16 and bf16 arithmetic in f32 ------------------===//
//
// x86 has no f16 or bf16 arithmetic below AVX512-FP16: each op is widened
// to f32 and its result rounded back, which is exactly the 16-bit op.
// The conversions to bf16 are then written as integer code, since LLVM
// would call compiler-rt's `__truncsfbf2`, which the libc-only `.so`
// lacks.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kina {
#define GEN_PASS_DEF_NARROWFLOATSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

namespace {
/// A 16-bit float, or a vector of them.
bool isNarrowFloat(Type type) {
  auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  return floatType && floatType.getWidth() == 16;
}

/// `type` with f32 elements.
Type widened(Type type) {
  Type f32 = Float32Type::get(type.getContext());
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(f32);
  return f32;
}

/// An elementwise arith op on 16-bit floats (not a conversion, a
/// constant or a select, which move bits), rebuilt on f32 operands with
/// its float results rounded back.
struct ComputeInF32 : RewritePattern {
  ComputeInF32(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect>(op->getDialect()) ||
        isa<arith::ExtFOp, arith::TruncFOp, arith::ConstantOp, arith::SelectOp,
            arith::BitcastOp>(op) ||
        op->getNumRegions() != 0 ||
        !llvm::any_of(op->getOperandTypes(), isNarrowFloat))
      return failure();
    Location loc = op->getLoc();
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(isNarrowFloat(operand.getType())
                             ? arith::ExtFOp::create(rewriter, loc,
                                                     widened(operand.getType()),
                                                     operand)
                                   .getResult()
                             : operand);
    SmallVector<Type> resultTypes;
    for (Type type : op->getResultTypes())
      resultTypes.push_back(isNarrowFloat(type) ? widened(type) : type);
    Operation *wide = rewriter.create(loc, op->getName().getIdentifier(),
                                      operands, resultTypes, op->getAttrs());
    SmallVector<Value> results;
    for (auto [result, type] :
         llvm::zip_equal(wide->getResults(), op->getResultTypes()))
      results.push_back(
          isNarrowFloat(type)
              ? arith::TruncFOp::create(rewriter, loc, type, result).getResult()
              : result);
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// f32 -> bf16 as integer code, rounded to nearest even; a NaN keeps its
/// sign and leading payload and is made quiet, as `vcvtneps2bf16`, the
/// runtime and `kina.to_bf16` do. The choice is made on 32-bit integers:
/// a select of bf16 vectors would make the x86 backend widen them.
struct TruncateToBFloat16 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type resultType = op.getType();
    if (!getElementTypeOrSelf(resultType).isBF16() ||
        !getElementTypeOrSelf(op.getIn().getType()).isF32())
      return failure();
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type(), i16 = rewriter.getI16Type();
    if (auto vector = dyn_cast<VectorType>(resultType)) {
      i32 = vector.clone(i32);
      i16 = vector.clone(i16);
    }
    auto constant = [&](int32_t v) -> Value {
      TypedAttr value = rewriter.getI32IntegerAttr(v);
      if (auto vector = dyn_cast<VectorType>(i32))
        value = DenseElementsAttr::get(vector, value);
      return arith::ConstantOp::create(rewriter, loc, value);
    };
    Value x = op.getIn();
    Value bits = arith::BitcastOp::create(rewriter, loc, i32, x);
    Value upper = arith::ShRUIOp::create(rewriter, loc, bits, constant(16));
    Value odd = arith::AndIOp::create(rewriter, loc, upper, constant(1));
    Value rounded = arith::ShRUIOp::create(
        rewriter, loc,
        arith::AddIOp::create(
            rewriter, loc,
            arith::AddIOp::create(rewriter, loc, bits, constant(0x7fff)), odd),
        constant(16));
    Value quiet = arith::OrIOp::create(rewriter, loc, upper, constant(0x40));
    Value isNaN =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO, x, x);
    Value chosen =
        arith::SelectOp::create(rewriter, loc, isNaN, quiet, rounded);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(
        op, resultType, arith::TruncIOp::create(rewriter, loc, i16, chosen));
    return success();
  }
};

struct NarrowFloatsPass
    : mlir::kina::impl::NarrowFloatsPassBase<NarrowFloatsPass> {
  void runOnOperation() override {
    {
      RewritePatternSet patterns(&getContext());
      patterns.add<ComputeInF32>(&getContext());
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    // Ours first: upstream's would select between bf16 vectors.
    RewritePatternSet patterns(&getContext());
    patterns.add<TruncateToBFloat16>(&getContext(), /*benefit=*/2);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
