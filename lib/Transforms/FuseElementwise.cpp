//===- FuseElementwise.cpp - Elementwise chains as one loop ---------------===//
//
// Upstream's elementwise fusion patterns under a control function that
// only fuses an all-parallel generic into an all-parallel generic that is
// its only user, or that only spreads rank-0 values (a broadcast scalar:
// recomputed in each user, it is a register, not a full-size tensor that
// every user reads; the AdamW update's coefficients, which CSE shares
// between every weight of one shape).
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kina {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

static bool allParallel(linalg::GenericOp op) {
  return op && op.getNumLoops() == op.getNumParallelLoops();
}

/// Whether every input of `op` is a rank-0 tensor.
static bool spreadsScalars(linalg::GenericOp op) {
  return llvm::all_of(op.getDpsInputs(), [](Value input) {
    auto type = dyn_cast<RankedTensorType>(input.getType());
    return type && type.getRank() == 0;
  });
}

namespace {
struct FuseElementwisePass
    : mlir::kina::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *operand) {
          auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
          auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
          return allParallel(producer) && allParallel(consumer) &&
                 (producer->hasOneUse() || spreadsScalars(producer));
        });
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      signalPassFailure();
  }
};
} // namespace
