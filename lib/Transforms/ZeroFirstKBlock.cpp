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
// Whether a read may take the fill value is derived from the loops seen
// here, not promised by kina-tile-matmuls: the passes in between (subset
// hoisting, bufferization, canonicalization, unrolling) reshape those
// loops, and a marker on a loop cannot tell whether they kept its promise.
// Not making the fill in the tiling pass instead would mean choosing zeros
// inside the register loop on tensors, where subset hoisting could not
// carry the tile in registers. After bufferization the check is a count:
// the tiles the loops update, over their constant bounds, cover the result
// exactly once.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "ViewedBuffer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::kina {
#define GEN_PASS_DEF_ZEROFIRSTKBLOCKPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

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

// The most elements of a filled buffer counted (a bit each, 8 MB); the
// fill of a larger one stays.
static constexpr int64_t kMaxCountedElements = int64_t(1) << 26;

/// The subviews from `filled` to `view`, outermost first, each of unit
/// strides, static sizes and its source's rank; nothing when `view` is not
/// such a view of `filled`.
static std::optional<SmallVector<memref::SubViewOp>> subviewsOf(Value view,
                                                                Value filled) {
  SmallVector<memref::SubViewOp> chain;
  for (; view != filled; view = chain.back().getSource()) {
    auto subview = view.getDefiningOp<memref::SubViewOp>();
    if (!subview ||
        subview.getSourceType().getRank() != subview.getType().getRank() ||
        ShapedType::isDynamicShape(subview.getStaticSizes()) ||
        !llvm::all_of(subview.getStaticStrides(),
                      [](int64_t stride) { return stride == 1; }))
      return std::nullopt;
    chain.push_back(subview);
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

/// Whether `op` transfers the whole of a subview of `filled`: a vector of
/// its static shape, from its first element, in order, unmasked.
static bool transfersTile(VectorTransferOpInterface op, Value filled) {
  auto type = dyn_cast<MemRefType>(op.getShapedType());
  return type && type.hasStaticShape() && !op.getMask() &&
         type.getElementType() == op.getVectorType().getElementType() &&
         op.getVectorType().getShape() == type.getShape() &&
         op.getPermutationMap().isIdentity() &&
         llvm::all_of(
             op.getIndices(),
             [](Value index) { return isConstantIntValue(index, 0); }) &&
         subviewsOf(op.getBase(), filled);
}

namespace {
/// A tile of the filled buffer read whole, then written whole: nothing
/// else touches the buffer between the two.
struct Update {
  vector::TransferReadOp read;
  vector::TransferWriteOp write;
};
} // namespace

/// The updates of tiles of `filled` in `loop`; nothing when an op in `loop`
/// uses `base` (the buffer `filled` views) otherwise: through a view that
/// is not a tile of `filled`, by other ops than subviews and vector
/// transfers, or by a read or a write without its other half.
static std::optional<SmallVector<Update>> updatesIn(scf::ForOp loop,
                                                    Value filled, Value base) {
  SmallVector<Update> updates;
  size_t writes = 0;
  WalkResult walk = loop->walk([&](Operation *op) {
    bool usesBase = llvm::any_of(op->getOperands(), [&](Value operand) {
      return isa<BaseMemRefType>(operand.getType()) &&
             mlir::kina::viewedBuffer(operand) == base;
    });
    if (!usesBase || isa<memref::SubViewOp>(op))
      return WalkResult::advance();
    if (isa<vector::TransferWriteOp>(op)) {
      ++writes;
      return WalkResult::advance();
    }
    auto read = dyn_cast<vector::TransferReadOp>(op);
    if (!read || !transfersTile(read, filled))
      return WalkResult::interrupt();
    Operation *next = read->getNextNode();
    while (next && !touches(next, base))
      next = next->getNextNode();
    auto write = dyn_cast_or_null<vector::TransferWriteOp>(next);
    if (!write || write.getBase() != read.getBase() ||
        !transfersTile(write, filled))
      return WalkResult::interrupt();
    updates.push_back({read, write});
    return WalkResult::advance();
  });
  // Each write follows one read: a write counted but not paired is alone.
  if (walk.wasInterrupted() || writes != updates.size())
    return std::nullopt;
  return updates;
}

/// Marks the box at `offsets` of `sizes` of a row-major buffer of `shape`
/// in `covered`, rows of the last dimension at a time, from dimension
/// `dim` with `row` the index of the dimensions before it; false when an
/// element was marked already.
static bool markOnce(llvm::BitVector &covered, ArrayRef<int64_t> shape,
                     ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                     size_t dim = 0, int64_t row = 0) {
  if (shape.empty()) {
    if (covered.test(0))
      return false;
    covered.set(0);
    return true;
  }
  if (dim + 1 == shape.size()) {
    int64_t begin = row * shape[dim] + offsets[dim], end = begin + sizes[dim];
    if (covered.find_first_in(begin, end) != -1)
      return false;
    covered.set(begin, end);
    return true;
  }
  for (int64_t i = offsets[dim], e = offsets[dim] + sizes[dim]; i < e; ++i)
    if (!markOnce(covered, shape, offsets, sizes, dim + 1,
                  row * shape[dim] + i))
      return false;
  return true;
}

/// The constant lower bound, upper bound and step of `loop`, if it has
/// them and a positive step.
static std::optional<std::array<int64_t, 3>> constantBounds(scf::ForOp loop) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *step < 1)
    return std::nullopt;
  return std::array<int64_t, 3>{*lb, *ub, *step};
}

/// Whether the tiles of `updates`, over every iteration of the loops around
/// each below `stop`, cover `filled` exactly once: those loops `scf.for`s
/// of constant bounds, the subviews' offsets constants or their induction
/// variables. Each instance of a tile is counted, element by element.
static bool coverOnce(ArrayRef<Update> updates, Value filled, Operation *stop) {
  auto type = cast<MemRefType>(filled.getType());
  ArrayRef<int64_t> shape = type.getShape();
  if (type.getNumElements() > kMaxCountedElements)
    return false;
  llvm::BitVector covered(type.getNumElements());
  for (Update update : updates) {
    // The loops around the update, innermost first, and their bounds.
    SmallVector<scf::ForOp> loops;
    SmallVector<std::array<int64_t, 3>> bounds;
    for (Operation *op = update.read->getParentOp(); op != stop;
         op = op->getParentOp()) {
      auto loop = dyn_cast<scf::ForOp>(op);
      std::optional<std::array<int64_t, 3>> b =
          loop ? constantBounds(loop) : std::nullopt;
      if (!b)
        return false;
      loops.push_back(loop);
      bounds.push_back(*b);
    }
    if (llvm::any_of(bounds, [](auto b) { return b[0] >= b[1]; }))
      continue;
    SmallVector<memref::SubViewOp> chain =
        *subviewsOf(update.read.getBase(), filled);
    // Every instance, the innermost loop's induction variable fastest.
    DenseMap<Value, int64_t> at;
    for (auto [loop, b] : llvm::zip_equal(loops, bounds))
      at[loop.getInductionVar()] = b[0];
    while (true) {
      SmallVector<int64_t> offsets(shape.size(), 0), sizes(shape);
      for (memref::SubViewOp subview : chain) {
        for (auto [d, offset] : llvm::enumerate(subview.getMixedOffsets())) {
          std::optional<int64_t> value = getConstantIntValue(offset);
          if (!value) {
            auto found = at.find(cast<Value>(offset));
            if (found == at.end())
              return false;
            value = found->second;
          }
          int64_t size = subview.getStaticSizes()[d];
          if (*value < 0 || *value + size > sizes[d])
            return false;
          offsets[d] += *value;
          sizes[d] = size;
        }
      }
      if (!markOnce(covered, shape, offsets, sizes))
        return false;
      size_t l = 0;
      for (; l < loops.size(); ++l) {
        int64_t &iv = at[loops[l].getInductionVar()];
        iv += bounds[l][2];
        if (iv < bounds[l][1])
          break;
        iv = bounds[l][0];
      }
      if (l == loops.size())
        break;
    }
  }
  return covered.all();
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

/// Whether `buffer` has no other name than its views: an argument of the
/// function or an allocation (not a global another op could name).
static bool isOwnBuffer(Value buffer) {
  if (auto arg = dyn_cast<BlockArgument>(buffer))
    return isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
      buffer.getDefiningOp());
}

namespace {
struct ZeroFirstKBlockPass
    : mlir::kina::impl::ZeroFirstKBlockPassBase<ZeroFirstKBlockPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation()->walk([&](linalg::FillOp fill) { fills.push_back(fill); });
    for (linalg::FillOp fill : fills)
      startFromFill(fill);
  }

  /// When the next op after `fill` that touches its buffer is a loop that
  /// updates tiles of it covering it exactly once, over the whole loop or
  /// in each iteration, the tiles' reads that would read the fill read its
  /// value instead, and the fill goes.
  void startFromFill(linalg::FillOp fill) {
    if (!fill.hasPureBufferSemantics())
      return;
    Value value = fill.getInputs()[0], filled = fill.getOutputs()[0];
    auto type = cast<MemRefType>(filled.getType());
    Value base = mlir::kina::viewedBuffer(filled);
    if (!type.hasStaticShape() || value.getType() != type.getElementType() ||
        !isOwnBuffer(base))
      return;
    Operation *next = fill->getNextNode();
    while (next && !touches(next, base))
      next = next->getNextNode();
    auto loop = dyn_cast_or_null<scf::ForOp>(next);
    std::optional<std::array<int64_t, 3>> bounds =
        loop ? constantBounds(loop) : std::nullopt;
    if (!bounds)
      return;
    std::optional<SmallVector<Update>> updates = updatesIn(loop, filled, base);
    if (!updates || updates->empty())
      return;
    auto reads = llvm::map_to_vector(
        *updates, [](const Update &update) { return update.read; });
    // Each tile read once, before it is written (K is one block).
    if (coverOnce(*updates, filled, loop->getParentOp())) {
      readFillValue(reads, value, nullptr);
    } else if ((*bounds)[0] < (*bounds)[1] &&
               coverOnce(*updates, filled, loop)) {
      // Each iteration reads every tile once, then writes it (K blocks):
      // the first reads the fill, the next ones what the one before wrote.
      readFillValue(reads, value, [&](OpBuilder &b, Location loc) -> Value {
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     loop.getInductionVar(),
                                     loop.getLowerBound());
      });
    } else {
      return;
    }
    fill.erase();
  }
};
} // namespace
