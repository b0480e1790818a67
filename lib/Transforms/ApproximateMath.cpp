//===- ApproximateMath.cpp - tanh and exp without libm calls --------------===//
//
// A loop that calls libm's tanhf or expf runs one element at a time;
// upstream's polynomial approximations are plain arithmetic that LLVM's
// loop vectorizer widens. Each approximated op is wrapped in a NaN check:
// the approximations clamp their operand, which would turn NaN into a
// number.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kina {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

namespace {
/// `op(x)` -> `x != x ? x : op(x)`, marking the inner op as guarded.
template <typename MathOp> struct GuardNaN : OpRewritePattern<MathOp> {
  using OpRewritePattern<MathOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    if (op->hasAttr(kGuarded) || !op.getType().isF32())
      return failure();
    Location loc = op.getLoc();
    Value x = op.getOperand();
    auto inner = MathOp::create(rewriter, loc, x);
    inner->setAttr(kGuarded, rewriter.getUnitAttr());
    Value isNaN =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO, x, x);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, isNaN, x, inner);
    return success();
  }
  static constexpr llvm::StringLiteral kGuarded = "kina_nan_guarded";
};
} // namespace

namespace {
struct ApproximateMathPass
    : mlir::kina::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    {
      RewritePatternSet guards(&getContext());
      guards.add<GuardNaN<math::TanhOp>, GuardNaN<math::ExpOp>>(&getContext());
      if (failed(applyPatternsGreedily(getOperation(), std::move(guards))))
        return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) {
          return llvm::is_contained({"math.tanh", "math.exp"},
                                    name);
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
