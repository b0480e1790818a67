//===- PrefetchNextBlock.cpp - Fetch B's next block while this one computes
//===//
//
// A packed matmul takes turns: its packing loop copies a K x N block of B
// into strips, waiting on memory (B, as large as the vocabulary times the
// width, is read from memory once), then the register tiles compute on the
// strips with memory idle. Here the register tiles of one block prefetch
// every line of the block packed next, spread evenly over their steps of K,
// so that the packing loop reads from cache and the memory traffic runs
// under the arithmetic. A burst of prefetches per tile instead stalls it.
// The address once cost a dozen integer instructions (a division among
// them) every step of K, a third of an AVX2 core's issue slots beside its 12
// FMAs: the register loop is unrolled by a group of steps, the group
// prefetches once, and the address advances by a constant.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "Kina/CPU/CPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kina {
#define GEN_PASS_DEF_PREFETCHNEXTBLOCKPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

using mlir::kina::kCacheLineBytes;

/// The most steps of K one prefetch serves, and so the unroll factor of the
/// register loop: 8 steps of a 6 x 16 AVX2 tile are about 1 KB of code,
/// well inside the op caches of Haswell and Zen.
static constexpr int64_t kMaxStepsPerPrefetch = 8;

namespace {
/// A 2-D view of a whole matrix: the matrix and the view's first row and
/// column in it.
struct Window {
  TypedValue<MemRefType> matrix;
  Value row, column;
};

/// The register loop of a block and how often it runs per block.
struct RegisterLoop {
  scf::ForOp loop;
  SmallVector<scf::ForOp> enclosing; // between the block's body and `loop`
  int64_t iterations = 0;            // over the whole block
};
} // namespace

/// The trip count of `loop` when its bounds are constants.
static std::optional<int64_t> tripCount(scf::ForOp loop) {
  auto lb = getConstantIntValue(loop.getLowerBound());
  auto ub = getConstantIntValue(loop.getUpperBound());
  auto step = getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *step <= 0)
    return std::nullopt;
  return *ub > *lb ? (*ub - *lb + *step - 1) / *step : 0;
}

/// Where `view` (static) lies in the matrix its unit-stride subviews start
/// from; nothing is built unless that matrix is static and views of
/// `view`'s shape tile it.
static std::optional<Window> windowOf(TypedValue<MemRefType> view,
                                      OpBuilder &b, Location loc) {
  ArrayRef<int64_t> tile = view.getType().getShape();
  SmallVector<memref::SubViewOp> chain;
  while (auto subview = view.getDefiningOp<memref::SubViewOp>()) {
    if (subview.getSourceType().getRank() != 2 ||
        subview.getType().getRank() != 2 ||
        !llvm::all_of(subview.getMixedStrides(),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
      return std::nullopt;
    chain.push_back(subview);
    view = subview.getSource();
  }
  MemRefType type = view.getType();
  if (!type.hasStaticShape() || type.getDimSize(0) % tile[0] ||
      type.getDimSize(1) % tile[1])
    return std::nullopt;
  Value row = arith::ConstantIndexOp::create(b, loc, 0), column = row;
  for (memref::SubViewOp subview : chain) {
    SmallVector<OpFoldResult> offsets = subview.getMixedOffsets();
    row = arith::AddIOp::create(
        b, loc, row, getValueOrCreateConstantIndexOp(b, loc, offsets[0]));
    column = arith::AddIOp::create(
        b, loc, column, getValueOrCreateConstantIndexOp(b, loc, offsets[1]));
  }
  return Window{view, row, column};
}

/// Whether `op` is a register tile's multiply-add: an FMA, or a BF16
/// product's pair dot (kina-tile-matmuls' bf16-dot).
static bool isMultiplyAdd(Operation &op) {
  return isa<vector::FMAOp, x86vector::DotBF16Op>(op);
}

/// The register loop that runs most often after `pack` in its block: a
/// loop carrying vectors through multiply-adds, inside constant-bound
/// loops only.
static std::optional<RegisterLoop> busiestRegisterLoop(scf::ForOp pack) {
  std::optional<RegisterLoop> best;
  Block *block = pack->getBlock();
  for (Operation *op = pack->getNextNode(); op; op = op->getNextNode())
    op->walk([&](scf::ForOp loop) {
      if (loop.getNumRegionIterArgs() == 0 ||
          !isa<VectorType>(loop.getRegionIterArgs()[0].getType()) ||
          llvm::none_of(loop.getBody()->getOperations(), isMultiplyAdd))
        return;
      RegisterLoop candidate{loop, {}, 0};
      std::optional<int64_t> count = tripCount(loop);
      if (!count)
        return;
      candidate.iterations = *count;
      for (Operation *inner = loop; inner->getBlock() != block;) {
        auto enclosing = dyn_cast<scf::ForOp>(inner->getParentOp());
        std::optional<int64_t> trips =
            enclosing ? tripCount(enclosing) : std::nullopt;
        if (!trips)
          return;
        candidate.enclosing.insert(candidate.enclosing.begin(), enclosing);
        candidate.iterations *= *trips;
        inner = enclosing;
      }
      if (!best || candidate.iterations > best->iterations)
        best = std::move(candidate);
    });
  return best;
}

/// The number of `loop`'s current iteration, from 0.
static Value iterationNumber(OpBuilder &b, Location loc, scf::ForOp loop) {
  Value from = arith::SubIOp::create(b, loc, loop.getInductionVar(),
                                     loop.getLowerBound());
  return arith::DivUIOp::create(b, loc, from, loop.getStep());
}

namespace {
struct PrefetchNextBlockPass
    : mlir::kina::impl::PrefetchNextBlockPassBase<PrefetchNextBlockPass> {
  void runOnOperation() override {
    // Collected first: prefetching unrolls loops that a walk would visit.
    SmallVector<scf::ForOp> packs;
    mlir::kina::KinaDialect::PackRowsAttrHelper packRows(&getContext());
    getOperation()->walk([&](scf::ForOp pack) {
      if (packRows.isAttrPresent(pack))
        packs.push_back(pack);
    });
    for (scf::ForOp pack : packs)
      prefetchNextBlock(pack);
  }

  void prefetchNextBlock(scf::ForOp pack) {
    vector::TransferReadOp read;
    pack->walk([&](vector::TransferReadOp r) { read = r; });
    if (!read)
      return;
    auto block = dyn_cast<TypedValue<MemRefType>>(read.getBase());
    std::optional<RegisterLoop> compute = busiestRegisterLoop(pack);
    if (!block || block.getType().getRank() != 2 ||
        !block.getType().hasStaticShape() || !compute)
      return;
    int64_t blockRows = block.getType().getDimSize(0);
    int64_t blockColumns = block.getType().getDimSize(1);
    int64_t perLine =
        kCacheLineBytes * 8 / block.getType().getElementTypeBitWidth();
    int64_t linesPerRow = llvm::divideCeil(blockColumns, perLine);
    int64_t lines = blockRows * linesPerRow;
    // Steps of K per prefetched line; fewer steps than lines: left alone.
    int64_t stepsPerLine = compute->iterations / lines;
    if (stepsPerLine < 1)
      return;

    OpBuilder b(pack);
    Location loc = pack.getLoc();
    std::optional<Window> window = windowOf(block, b, loc);
    if (!window)
      return;
    int64_t rows = window->matrix.getType().getDimSize(0);
    int64_t columns = window->matrix.getType().getDimSize(1);
    auto index = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    // The next block: the next K block of these columns, or after the last
    // one the first K block of the next columns (the last block of all
    // fetches itself again).
    Value belowRow =
        arith::AddIOp::create(b, loc, window->row, index(b, blockRows));
    Value lastInColumn = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge, belowRow, index(b, rows));
    Value nextRow =
        arith::SelectOp::create(b, loc, lastInColumn, index(b, 0), belowRow);
    Value rightColumn = arith::MinSIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, window->column, index(b, blockColumns)),
        index(b, columns - blockColumns));
    Value nextColumn = arith::SelectOp::create(b, loc, lastInColumn,
                                               rightColumn, window->column);

    // One prefetch per group of steps: a power of two, at most a line's
    // share of steps (so every line is still fetched), dividing the loop,
    // which is unrolled by it and stays a loop of at least two groups.
    scf::ForOp loop = compute->loop;
    int64_t trips = *tripCount(loop);
    int64_t group = std::min<int64_t>(llvm::bit_floor(uint64_t(stepsPerLine)),
                                      kMaxStepsPerPrefetch);
    while (group > 1 && (trips % group || trips / group < 2))
      group /= 2;
    int64_t groupsPerRun = trips / group;
    int64_t runs = compute->iterations / trips;
    if (groupsPerRun > rows)
      return;
    if (group > 1) {
      FailureOr<UnrolledLoopInfo> unrolled = loopUnrollByFactor(loop, group);
      if (failed(unrolled))
        return;
      if (unrolled->mainLoopOp)
        loop = *unrolled->mainLoopOp;
    }

    // Run t of the register loop (its runs over the block counted in
    // order) prefetches from line t * lines / runs on, one line per group,
    // taking the block's lines a column of lines at a time (down its rows,
    // then the next 64 bytes): consecutive groups fetch consecutive rows, so
    // the address advances by the matrix's row pitch, which LLVM turns
    // into a pointer increment: the register loop carries no multiply or
    // division. A run's spare groups fetch the next run's lines early; a
    // run that crosses into the next column of lines fetches rows below the
    // block instead (a prefetch never faults), which the packing loop's own
    // prefetches make up for.
    b.setInsertionPoint(loop);
    Value run = index(b, 0);
    for (scf::ForOp each : compute->enclosing)
      run = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, run, index(b, *tripCount(each))),
          iterationNumber(b, loc, each));
    Value first = arith::DivUIOp::create(
        b, loc, arith::MulIOp::create(b, loc, run, index(b, lines)),
        index(b, runs));
    Value firstRow = arith::MinUIOp::create(
        b, loc,
        arith::AddIOp::create(
            b, loc, nextRow,
            arith::RemUIOp::create(b, loc, first, index(b, blockRows))),
        index(b, rows - groupsPerRun));
    Value column = arith::AddIOp::create(
        b, loc, nextColumn,
        arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, first, index(b, blockRows)),
            index(b, perLine)));
    b.setInsertionPointToStart(loop.getBody());
    Value row = arith::AddIOp::create(b, loc, firstRow,
                                      iterationNumber(b, loc, loop));
    memref::PrefetchOp::create(b, loc, window->matrix, ValueRange{row, column},
                               /*isWrite=*/false, /*localityHint=*/3,
                               /*isDataCache=*/true);
  }
};
} // namespace
