//===- ZeroFirstKBlock.cpp - Start a matmul's first K block from zeros ----===//
//
// A tiled matmul zero-fills its result, then every K block loads each
// accumulator tile from it, adds its products and stores it back. The
// fill is a pass of stores over the whole result (16 MB of logits, cold
// memory: 7% of lm_head's time) only for the first block to load zeros.
// Here the first block's accumulators start as zeros in registers and the
// fill goes. A matmul whose K is one block (a weight gradient over a
// batch's 256 rows) has no K loop left; its loop over M tiles reads every
// accumulator once, and starts it from zeros the same way.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "ViewedBuffer.h"

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

/// Whether `op`, or an op inside it, uses `base` or a view of it.
static bool touches(Operation *op, Value base) {
  return op
      ->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          if (isa<BaseMemRefType>(operand.getType()) &&
              mlir::kina::viewedBuffer(operand) == base)
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// Each read of `reads` becomes a broadcast of `value` where `first` holds
/// (the read where not); with no `first`, always.
static void readFillValue(ArrayRef<vector::TransferReadOp> reads, Value value,
                          function_ref<Value(OpBuilder &, Location)> first) {
  for (vector::TransferReadOp read : reads) {
    OpBuilder b(read);
    Location loc = read.getLoc();
    auto broadcast = [&](OpBuilder &b, Location loc) -> Value {
      return vector::BroadcastOp::create(b, loc, read.getVectorType(), value);
    };
    if (!first) {
      read.getResult().replaceAllUsesWith(broadcast(b, loc));
      read.erase();
      continue;
    }
    auto choice = scf::IfOp::create(
        b, loc, first(b, loc),
        [&](OpBuilder &b, Location loc) {
          scf::YieldOp::create(b, loc, broadcast(b, loc));
        },
        [&](OpBuilder &b, Location loc) {
          scf::YieldOp::create(b, loc, read.getResult());
        });
    read.getResult().replaceAllUsesExcept(choice.getResult(0),
                                          choice.elseYield());
    read->moveBefore(choice.elseYield());
  }
}

namespace {
struct ZeroFirstKBlockPass
    : mlir::kina::impl::ZeroFirstKBlockPassBase<ZeroFirstKBlockPass> {
  void runOnOperation() override {
    getOperation()->walk([&](scf::ForOp loop) {
      if (loop->hasAttr(mlir::kina::kKBlocksAttr))
        startFromFill(loop);
      else if (loop->hasAttr(mlir::kina::kOneKBlockAttr))
        startOneBlockFromFill(loop);
    });
  }

  /// When a fill of the result comes before `tiles` (past ops that use
  /// neither its buffer nor a view of it: B's packing), every read of the
  /// result in `tiles` reads the fill's value instead, and the fill goes.
  void startOneBlockFromFill(scf::ForOp tiles) {
    linalg::FillOp fill;
    for (Operation *op = tiles->getPrevNode(); op && !fill;
         op = op->getPrevNode())
      fill = dyn_cast<linalg::FillOp>(op);
    if (!fill || !fill.hasPureBufferSemantics())
      return;
    Value filled = fill.getOutputs()[0];
    Value base = mlir::kina::viewedBuffer(filled);
    for (Operation *between = fill->getNextNode(); between != tiles;
         between = between->getNextNode())
      if (touches(between, base))
        return;
    std::optional<SmallVector<vector::TransferReadOp>> reads =
        readsInside(filled, tiles);
    if (!reads || reads->empty())
      return;
    readFillValue(*reads, fill.getInputs()[0], nullptr);
    fill.erase();
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
    readFillValue(*reads, fill.getInputs()[0],
                  [&](OpBuilder &b, Location loc) -> Value {
                    return arith::CmpIOp::create(
                        b, loc, arith::CmpIPredicate::eq,
                        blocks.getInductionVar(), blocks.getLowerBound());
                  });
    fill.erase();
  }
};
} // namespace
