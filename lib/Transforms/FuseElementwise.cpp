//===- FuseElementwise.cpp - Elementwise chains as one loop ---------------===//
//
// Upstream's elementwise fusion patterns under a control function that
// only fuses an all-parallel generic into an all-parallel generic that is
// its only user, or that only spreads rank-0 values (a broadcast scalar:
// recomputed in each user, it is a register, not a full-size tensor that
// every user reads; the AdamW update's coefficients, which CSE shares
// between every weight of one shape).
//
// A producer with other users is fused into its first user by a pattern of
// our own: upstream's keeps the producer alive for the other users (its
// replacement skips the producer's results), so the fused loop would
// compute its values a second time. Ours hands every use of the producer
// to the fused op, which writes the producer's result as well: nothing is
// computed twice and the producer's inputs are read once. AdamW's new
// moments (each a result of the step and an input of the new weight)
// become one loop with the new weight: w, g, m and v read once and w, m and
// v written once, where three loops read the gradient twice and wrote the
// new moments only to read them back.
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

/// Whether `operand` is the consumer's only use of its producer, and every
/// other user of the producer comes after the consumer in its block: the
/// fused op, at the consumer, can then take over every use.
static bool otherUsersFollow(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  Operation *consumer = operand->getOwner();
  for (OpOperand &other : consumer->getOpOperands())
    if (&other != operand && other.get().getDefiningOp() == producer)
      return false;
  return llvm::all_of(producer->getUsers(), [&](Operation *user) {
    return user == consumer || (user->getBlock() == consumer->getBlock() &&
                                consumer->isBeforeInBlock(user));
  });
}

namespace {
/// Fuses an all-parallel generic with several users into the first of
/// them, every use of its results then reading the fused op's.
struct FuseIntoFirstUser : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!allParallel(consumer))
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
      if (!allParallel(producer) || producer->hasOneUse() ||
          spreadsScalars(producer) ||
          !linalg::areElementwiseOpsFusable(&operand) ||
          !otherUsersFollow(&operand))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        return failure();
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(consumer);
      rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

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
    patterns.add<FuseIntoFirstUser>(&getContext());
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      signalPassFailure();
  }
};
} // namespace
