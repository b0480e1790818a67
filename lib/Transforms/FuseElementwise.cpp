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
// A cheap producer with at most one full-size input is recomputed in each
// later user instead of being stored for it: a gradient's adjoints read
// the forward's intermediates much later (the GELU's seven per layer), and
// each stored one is a tensor written in the forward and read back in the
// backward, where recomputing it reads the one input the user then shares.
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

/// The most ops a producer's body may have to be recomputed in its users.
static constexpr unsigned kMaxRecomputedOps = 32;

/// Whether `producer` is worth recomputing rather than storing: an
/// elementwise body of at most kMaxRecomputedOps ops reading at most one
/// tensor of the full iteration space (the others broadcast: biases,
/// scalars), so that a user recomputing it reads one tensor where it read
/// one or more of the producer's results.
static bool cheapToRecompute(linalg::GenericOp producer) {
  if (!allParallel(producer) || producer.getNumDpsInits() == 0 ||
      producer.getBody()->getOperations().size() > kMaxRecomputedOps)
    return false;
  unsigned full = 0;
  for (OpOperand *input : producer.getDpsInputOperands()) {
    AffineMap map = producer.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return false;
    if (map.getNumResults() == producer.getNumLoops())
      ++full;
  }
  return full <= 1;
}

/// Whether every use of `producer` is by `consumer`.
static bool onlyUsedBy(Operation *producer, Operation *consumer) {
  return llvm::all_of(producer->getUsers(),
                      [&](Operation *user) { return user == consumer; });
}

/// Whether `consumer` reads a result of `producer` that only all-parallel
/// generics read: once the later ones recompute it and the first takes
/// the producer in (FuseIntoFirstUser), it is not stored at all. A result
/// that another op reads (a reduction, a matmul, the return) is stored
/// anyway, and reading it costs a later user no more than recomputing.
static bool savesAStore(Operation *producer, Operation *consumer) {
  return llvm::any_of(producer->getResults(), [&](Value result) {
    return llvm::is_contained(result.getUsers(), consumer) &&
           llvm::all_of(result.getUsers(), [](Operation *user) {
             return allParallel(dyn_cast<linalg::GenericOp>(user));
           });
  });
}

namespace {
/// A cheap producer (cheapToRecompute) read by a user that is not its
/// first, for a result that only generics read (savesAStore): the user
/// reads a copy of the producer made right before it, which then fuses
/// into it; the producer keeps its earlier users.
struct RecomputeInLaterUsers : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!allParallel(consumer))
      return failure();
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || onlyUsedBy(producer, consumer) ||
          producer->getBlock() != consumer->getBlock() ||
          spreadsScalars(producer) || !cheapToRecompute(producer) ||
          !linalg::areElementwiseOpsFusable(operand))
        continue;
      Operation *first = *llvm::min_element(
          producer->getUsers(), [&](Operation *a, Operation *b) {
            return a->getBlock() == b->getBlock() && a->isBeforeInBlock(b);
          });
      if (first == consumer || !savesAStore(producer, consumer))
        continue;
      rewriter.setInsertionPoint(consumer);
      Operation *copy = rewriter.clone(*producer);
      rewriter.modifyOpInPlace(consumer, [&] {
        for (OpOperand &use : consumer->getOpOperands())
          if (use.get().getDefiningOp() == producer)
            use.set(copy->getResult(
                cast<OpResult>(use.get()).getResultNumber()));
      });
      return success();
    }
    return failure();
  }
};

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
  /// Upstream's fusions (a producer into its only user, broadcast scalars
  /// into every user) and `extra`, applied until none applies.
  template <typename Extra> LogicalResult fuseWith() {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *operand) {
          auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
          auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
          return allParallel(producer) && allParallel(consumer) &&
                 (onlyUsedBy(producer, consumer) || spreadsScalars(producer));
        });
    patterns.add<Extra>(&getContext());
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    return applyPatternsGreedily(getOperation(), std::move(patterns), config);
  }

  void runOnOperation() override {
    // Recomputing first: a producer fused into its first user would hand
    // its later users the fused op's stored results.
    if (failed(fuseWith<RecomputeInLaterUsers>()) ||
        failed(fuseWith<FuseIntoFirstUser>()))
      signalPassFailure();
  }
};
} // namespace
