//===- ZeroFirstKBlock.cpp - Start a matmul's first K block from zeros ----===//
//
// A tiled matmul zero-fills its result, then every K block loads each
// accumulator tile from it, adds its products and stores it back. The
// fill is a pass of stores over the whole result (16 MB of logits, cold
// memory: 7% of lm_head's time) only for the first block to load zeros.
// Here the first block's accumulators start as zeros in registers and the
// fill goes.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kina {
#define GEN_PASS_DEF_ZEROFIRSTKBLOCKPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// The vector reads of `result` (through subviews) inside `loop`; nothing
/// when an op inside `loop` uses it otherwise than by vector reads and
/// writes.
static std::optional<SmallVector<vector::TransferReadOp>>
readsInside(Value result, scf::ForOp loop) {
  SmallVector<vector::TransferReadOp> reads;
  SmallVector<Value> views = {result};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (auto subview = dyn_cast<memref::SubViewOp>(user)) {
        views.push_back(subview.getResult());
        continue;
      }
      if (!loop->isProperAncestor(user))
        continue;
      if (auto read = dyn_cast<vector::TransferReadOp>(user))
        reads.push_back(read);
      else if (!isa<vector::TransferWriteOp>(user))
        return std::nullopt;
    }
  }
  return reads;
}

namespace {
struct ZeroFirstKBlockPass
    : mlir::kina::impl::ZeroFirstKBlockPassBase<ZeroFirstKBlockPass> {
  void runOnOperation() override {
    getOperation()->walk([&](scf::ForOp blocks) {
      if (blocks->hasAttr(mlir::kina::kKBlocksAttr))
        startFromFill(blocks);
    });
  }

  /// When a fill of the result comes right before `blocks`, its first
  /// iteration reads the fill's value instead of the result, and the fill
  /// goes (that iteration writes every element).
  void startFromFill(scf::ForOp blocks) {
    auto fill = dyn_cast_or_null<linalg::FillOp>(blocks->getPrevNode());
    if (!fill || !fill.hasPureBufferSemantics())
      return;
    std::optional<SmallVector<vector::TransferReadOp>> reads =
        readsInside(fill.getOutputs()[0], blocks);
    if (!reads)
      return;
    Value value = fill.getInputs()[0];
    for (vector::TransferReadOp read : *reads) {
      OpBuilder b(read);
      Location loc = read.getLoc();
      Value first =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                blocks.getInductionVar(), blocks.getLowerBound());
      auto choice = scf::IfOp::create(
          b, loc, first,
          [&](OpBuilder &b, Location loc) {
            scf::YieldOp::create(
                b, loc,
                vector::BroadcastOp::create(b, loc, read.getVectorType(), value)
                    .getResult());
          },
          [&](OpBuilder &b, Location loc) {
            scf::YieldOp::create(b, loc, read.getResult());
          });
      read.getResult().replaceAllUsesExcept(choice.getResult(0),
                                            choice.elseYield());
      read->moveBefore(choice.elseYield());
    }
    fill.erase();
  }
};
} // namespace
