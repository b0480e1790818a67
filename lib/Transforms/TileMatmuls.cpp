//===- TileMatmuls.cpp - Cache and register tiling of linalg.matmul -------===//
//
// BLIS-like: cache tiles (the N tiles parallel), B's block packed into
// contiguous strips, register tiles vectorized with their contraction
// lowered to outer products; batched matmuls split into matmuls first.
// Shapes whose N the strip width does not divide keep the plain loops,
// whose multiply-add becomes one fused multiply-add: every element of a
// product is then the same chain of FMAs over K, in K's order, whichever
// path computes it, so that a product split by columns (a column-parallel
// shard, a narrower tile) has exactly the bits of the whole one.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "BF16PairProducts.h"
#include "CheckedOptions.h"
#include "TransposedOperands.h"

#include "Kina/CPU/MatmulModel.h"
#include "Kina/CPU/MatmulTuning.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorTransforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kina {
#define GEN_PASS_DEF_TILEMATMULSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

// Column panels of a parallel matmul: at least this many where N allows, so
// that a few threads share them evenly (768 columns: 12 of 64, not 3 of
// 256), but no narrower than the smallest panel worth a thread.
static constexpr int64_t kMinPanels = 8;
static constexpr int64_t kMinPanelWidth = 64;
// Register tiles: rows up to kina::kMaxTileRows; columns a whole number of
// 8- or 16-lane vectors.
static constexpr int64_t kVectorColumns = 32;
// Rows of B a streamed (unpacked) matmul reads per step of K.
static constexpr int64_t kStreamRows = 8;

/// The cache tile of a dimension of `size`: the largest `unit` x 2^j that
/// divides it and is at most `bound` (the options, from the CPU's caches),
/// else `unit` (static shapes: no partial cache tiles).
static int64_t cacheTile(int64_t size, int64_t bound, int64_t unit = 1) {
  int64_t best = unit;
  for (int64_t c = unit; c <= bound && c <= size; c *= 2)
    if (size % c == 0)
      best = c;
  return best;
}

using LoopType = scf::SCFTilingOptions::LoopType;

static scf::SCFTilingOptions tilingOptions(MLIRContext *ctx,
                                           ArrayRef<int64_t> sizes,
                                           ArrayRef<int64_t> interchange,
                                           LoopType loopType) {
  scf::SCFTilingOptions options;
  options.setLoopType(loopType);
  options.setTileSizes(getAsIndexOpFoldResult(ctx, sizes));
  if (!interchange.empty())
    options.setInterchange(interchange);
  return options;
}

/// The column panels of a streamed matmul: as wide as still gives
/// kMinPanels of them (a multiple of `unit` that divides `size`), else the
/// whole width: B's rows are read in runs of a panel.
static int64_t widestPanel(int64_t size, int64_t unit) {
  for (int64_t width = size / kMinPanels / unit * unit; width >= unit;
       width -= unit)
    if (size % width == 0)
      return width;
  return size;
}

/// Tiles `op`; returns the tiled op and the loops, outermost first.
static FailureOr<scf::SCFTilingResult>
tile(RewriterBase &rewriter, Operation *op, ArrayRef<int64_t> sizes,
     ArrayRef<int64_t> interchange, LoopType loopType = LoopType::ForOp) {
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions options =
      tilingOptions(rewriter.getContext(), sizes, interchange, loopType);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
  if (failed(tiled))
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  return tiled;
}

/// Copies `block` (K x N, rows N apart in B) before `loop` into N/width
/// strips of K x width contiguous floats: the register tiles then stream
/// their strip from L1 in order, not one TLB page per row of B. A block of
/// a transpose W^T is packed from W's rows (no copy of W^T is made).
static FailureOr<Value> packStrips(RewriterBase &rewriter,
                                   tensor::ExtractSliceOp block,
                                   LoopLikeOpInterface loop, int64_t width) {
  for (Value operand : block->getOperands())
    if (loop->isAncestor(operand.getParentRegion()->getParentOp()))
      return failure();
  Location loc = block.getLoc();
  rewriter.setInsertionPoint(loop);
  if (std::optional<mlir::kina::TransposedSlice> rows =
          mlir::kina::sliceOfTranspose(rewriter, block.getResult()))
    return mlir::kina::packTransposedStrips(rewriter, loc, *rows, width);
  auto hoisted = cast<tensor::ExtractSliceOp>(rewriter.clone(*block));
  RankedTensorType type = hoisted.getType();
  int64_t rows = type.getDimSize(0), strips = type.getDimSize(1) / width;
  Type f32 = type.getElementType();
  Value packed = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{strips, rows, width}, f32);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = index(rewriter, 0), one = index(rewriter, 1);
  auto vector = VectorType::get({width}, f32);
  // Row by row: B's rows are read in order (what the prefetchers follow),
  // each row's pieces appended to their strips.
  auto outer = scf::ForOp::create(
      rewriter, loc, zero, index(rewriter, rows), one, ValueRange{packed},
      [&](OpBuilder &b, Location loc, Value row, ValueRange into) {
        auto inner = scf::ForOp::create(
            b, loc, zero, index(b, strips), one, into,
            [&](OpBuilder &b, Location loc, Value strip, ValueRange into) {
              Value column =
                  arith::MulIOp::create(b, loc, strip, index(b, width));
              Value pad = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32));
              Value v = vector::TransferReadOp::create(
                  b, loc, vector, hoisted, ValueRange{row, column}, pad,
                  ArrayRef<bool>{true});
              Value written =
                  vector::TransferWriteOp::create(b, loc, v, into.front(),
                                                  ValueRange{strip, row, zero},
                                                  ArrayRef<bool>{true})
                      .getResult();
              scf::YieldOp::create(b, loc, written);
            });
        scf::YieldOp::create(b, loc, inner.getResult(0));
      });
  mlir::kina::KinaDialect::PackRowsAttrHelper(rewriter.getContext())
      .setAttr(outer, rewriter.getUnitAttr());
  return outer.getResult(0);
}

/// The matmul of one strip (M x K times K x width) reads the packed strip
/// that holds the same values.
static void readFromStrips(RewriterBase &rewriter, linalg::LinalgOp strip,
                           Value packed, Value column, int64_t width) {
  auto rhs = cast<RankedTensorType>(strip.getDpsInputs()[1].getType());
  rewriter.setInsertionPoint(strip);
  Location loc = strip.getLoc();
  Value index = arith::DivUIOp::create(
      rewriter, loc, column,
      arith::ConstantIndexOp::create(rewriter, loc, width));
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  Value slice = tensor::ExtractSliceOp::create(
      rewriter, loc, rhs, packed, ArrayRef<OpFoldResult>{index, zero, zero},
      ArrayRef<OpFoldResult>{one, rewriter.getIndexAttr(rhs.getDimSize(0)),
                             rewriter.getIndexAttr(width)},
      ArrayRef<OpFoldResult>{one, one, one});
  rewriter.modifyOpInPlace(strip, [&] { strip->setOperand(1, slice); });
}

/// X in rows one cache line longer than its own (a K x M tensor viewed in
/// a K x (M + a line) buffer), when X's rows are a multiple of
/// `wayBytes` apart: the register tiles of A = X^T read a run of X's row
/// at each step of K, and rows a way size apart all fall into one L1 set,
/// evicting each other (A^T B 3072 x 256 x 768: 182 GFLOP/s against 234 at
/// M = 3056). X is copied once, before the product.
static void padTransposedRows(RewriterBase &rewriter, linalg::MatmulOp op,
                              int64_t wayBytes) {
  auto transpose = op.getInputs()[0].getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !transpose.hasPureTensorSemantics() ||
      transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
    return;
  Value x = transpose.getInput();
  auto type = cast<RankedTensorType>(x.getType());
  if (!type.hasStaticShape())
    return;
  int64_t k = type.getDimSize(0), m = type.getDimSize(1);
  if (m * type.getElementTypeBitWidth() / 8 % wayBytes)
    return;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  int64_t line =
      mlir::kina::kCacheLineBytes * 8 / type.getElementTypeBitWidth();
  Value wide = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{k, m + line}, type.getElementType());
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets = {zero, zero}, strides = {one, one};
  SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(k),
                                     rewriter.getIndexAttr(m)};
  Value rows = tensor::ExtractSliceOp::create(rewriter, loc, type, wide,
                                              offsets, sizes, strides);
  Value copied =
      linalg::CopyOp::create(rewriter, loc, x, rows)->getResult(0);
  // Read back through the wide tensor: the copy's own result, a slice of
  // an empty tensor, would be allocated at its unpadded shape.
  Value inserted = tensor::InsertSliceOp::create(rewriter, loc, copied, wide,
                                                 offsets, sizes, strides);
  Value padded = tensor::ExtractSliceOp::create(rewriter, loc, type, inserted,
                                                offsets, sizes, strides);
  Value transposed = linalg::TransposeOp::create(
                         rewriter, loc, padded,
                         tensor::EmptyOp::create(
                             rewriter, loc, ArrayRef<int64_t>{m, k},
                             type.getElementType()),
                         ArrayRef<int64_t>{1, 0})
                         ->getResult(0);
  rewriter.modifyOpInPlace(op, [&] { op->setOperand(0, transposed); });
}

/// `op` (a matmul the tiling left as loops) as a generic whose body is
/// one `math.fma` of the two elements and the accumulator: the vectorized
/// tiles' arithmetic (their contraction lowers to vector FMAs). Left
/// alone if its body is not the multiply-add of a float matmul.
static LogicalResult contractWithFma(RewriterBase &rewriter,
                                     linalg::LinalgOp op) {
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::GenericOp> generic = linalg::generalizeNamedOp(rewriter, op);
  if (failed(generic))
    return failure();
  Block &body = generic->getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  auto multiply =
      add ? add.getRhs().getDefiningOp<arith::MulFOp>() : arith::MulFOp();
  if (!multiply || add.getLhs() != body.getArgument(2) ||
      !multiply->hasOneUse())
    return success();
  rewriter.setInsertionPoint(add);
  Value fused = math::FmaOp::create(rewriter, add.getLoc(), multiply.getLhs(),
                                    multiply.getRhs(), add.getLhs());
  rewriter.replaceOp(add, fused);
  rewriter.eraseOp(multiply);
  return success();
}

/// Vectorizes one register tile (a matmul small enough for the registers)
/// to a `vector.contract`, which the pass lowers to FMAs.
static LogicalResult vectorizeTile(RewriterBase &rewriter, Operation *tileOp) {
  rewriter.setInsertionPoint(tileOp);
  // A named contraction lowers to FMAs (mulf + addf would not fuse).
  FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
      rewriter, tileOp, /*inputVectorSizes=*/{},
      /*inputScalableVecDims=*/{}, /*vectorizeNDExtract=*/false,
      /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/true);
  if (failed(vectorized))
    return failure();
  rewriter.replaceOp(tileOp, vectorized->replacements);
  return success();
}

/// Tiles `strip` (M x K x tileN) into height x tileN register tiles, one
/// step of K each, vectorized (a product of BF16 pairs on vdpbf16ps). A's
/// column of a tile, when A is a transpose X^T, is read from X's row.
static LogicalResult vectorizeRegisterTiles(RewriterBase &rewriter,
                                            Operation *strip, int64_t height,
                                            bool bf16Pairs) {
  auto registers = tile(rewriter, strip, {height, 0, 1}, {});
  if (failed(registers))
    return failure();
  Operation *tileOp = registers->tiledOps.front();
  if (bf16Pairs)
    return mlir::kina::vectorizePairTile(rewriter,
                                         cast<linalg::LinalgOp>(tileOp));
  rewriter.setInsertionPoint(tileOp);
  if (std::optional<mlir::kina::TransposedSlice> row =
          mlir::kina::sliceOfTranspose(rewriter, tileOp->getOperand(0))) {
    Value column =
        mlir::kina::columnFromRow(rewriter, tileOp->getLoc(), *row);
    rewriter.modifyOpInPlace(tileOp, [&] { tileOp->setOperand(0, column); });
  }
  return vectorizeTile(rewriter, tileOp);
}

/// The N tiles of `op` as an scf.forall, with the producer of the result's
/// initial value (the zero fill) fused in: each column panel is zeroed by
/// the thread that computes it, while it is in that core's cache, instead
/// of the whole result in one serial pass before.
static FailureOr<Operation *> splitColumns(RewriterBase &rewriter,
                                           Operation *op, int64_t columns) {
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tilingOptions(rewriter.getContext(), {0, columns, 0},
                                         {}, LoopType::ForallOp));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> split =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(op), options);
  if (failed(split))
    return failure();
  rewriter.replaceOp(op, split->replacements.lookup(op->getResult(0)));
  return split->tiledAndFusedOps.front();
}

/// `linalg.batch_matmul` as an scf.forall over the batch of linalg.matmul,
/// which the rest of the pass then tiles like any other.
static LogicalResult splitBatch(RewriterBase &rewriter,
                                linalg::BatchMatmulOp op) {
  auto batches = tile(rewriter, op, {1, 0, 0, 0}, {}, LoopType::ForallOp);
  if (failed(batches))
    return failure();
  Operation *one = batches->tiledOps.front();
  rewriter.setInsertionPoint(one);
  Location loc = one->getLoc();
  SmallVector<ReassociationIndices> dropBatch = {{0, 1}, {2}};
  auto collapse = [&](Value v) -> Value {
    return tensor::CollapseShapeOp::create(rewriter, loc, v, dropBatch);
  };
  auto matmul = linalg::MatmulOp::create(
      rewriter, loc,
      ValueRange{collapse(one->getOperand(0)), collapse(one->getOperand(1))},
      ValueRange{collapse(one->getOperand(2))});
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
      one, one->getResult(0).getType(), matmul.getResult(0), dropBatch);
  return success();
}

namespace {
struct TileMatmulsPass
    : mlir::kina::detail::CheckedOptions<
          mlir::kina::impl::TileMatmulsPassBase<TileMatmulsPass>> {
  using CheckedOptions::CheckedOptions;

  /// What is wrong with the options, if anything.
  std::optional<std::string> badOption() const override {
    if (std::optional<std::string> bad = mlir::kina::checkTunedParameters(
            {0, 0, 0, tileM, cacheM, cacheN, cacheK}))
      return "option " + *bad;
    if (tileN < 1 || (kVectorColumns % tileN && tileN % kVectorColumns))
      return "option 'tile-n' must divide or be a multiple of " +
             std::to_string(kVectorColumns) + ", got " + std::to_string(tileN);
    if (l1WayBytes < 1)
      return "option 'l1-way-bytes' must be at least 1, got " +
             std::to_string(l1WayBytes);
    if (parallelThreshold < 1)
      return "option 'parallel-threshold' must be at least 1, got " +
             std::to_string(parallelThreshold);
    for (const std::string &entry : tuned) {
      std::optional<mlir::kina::TunedMatmul> t =
          mlir::kina::parseTunedMatmul(entry);
      if (!t)
        return "option 'tuned': '" + entry +
               "' is not MxKxN:tile-m:cache-m:cache-n:cache-k";
      if (std::optional<std::string> bad = mlir::kina::checkTunedParameters(*t))
        return "option 'tuned': '" + entry + "': " + *bad;
    }
    return std::nullopt;
  }

  /// The options for an M x K x N matmul: its entry in `entries` (the
  /// `tuned` option, parsed), else the pass's.
  mlir::kina::TunedMatmul
  parametersFor(ArrayRef<mlir::kina::TunedMatmul> entries, int64_t m, int64_t k,
                int64_t n) const {
    for (const mlir::kina::TunedMatmul &t : entries)
      if (t.m == m && t.k == k && t.n == n)
        return t;
    return {m, k, n, tileM, cacheM, cacheN, cacheK};
  }

  /// Cache tiles visited N, K, M; per (N, K) tile B's block packed into
  /// strips of tileN columns, which register tiles of registerRows rows
  /// read.
  LogicalResult tilePacked(RewriterBase &rewriter, Operation *panel,
                           int64_t tileM0, int64_t tileN0, int64_t tileK0,
                           int64_t registerRows, bool bf16Pairs) {
    auto cached = tile(rewriter, panel, {tileM0, tileN0, tileK0}, {1, 2, 0});
    if (failed(cached))
      return failure();
    Operation *block = cached->tiledOps.front();
    auto rhs = block->getOperand(1).getDefiningOp<tensor::ExtractSliceOp>();
    // Strips of tileN columns; the packed copy of B's block is made once
    // per (N, K) cache tile, outside the M loop.
    auto strips = tile(rewriter, block, {0, tileN, 0}, {});
    if (failed(strips))
      return failure();
    auto strip = cast<linalg::LinalgOp>(strips->tiledOps.front());
    if (rhs && !cached->loops.empty()) {
      FailureOr<Value> packed =
          packStrips(rewriter, rhs, cached->loops.back(), tileN);
      if (succeeded(packed))
        readFromStrips(
            rewriter, strip, *packed,
            cast<scf::ForOp>(strips->loops.front()).getInductionVar(), tileN);
    }
    // Register tiles of registerRows rows; the rows they do not divide
    // form one shorter tile.
    int64_t rows =
        cast<RankedTensorType>(strip->getResult(0).getType()).getDimSize(0);
    SmallVector<std::pair<Operation *, int64_t>, 2> parts = {
        {strip, std::min(registerRows, rows)}};
    if (rows > registerRows && rows % registerRows) {
      auto [main, rest] = linalg::splitOp(
          rewriter, cast<TilingInterface>(strip.getOperation()), 0,
          rewriter.getIndexAttr(rows / registerRows * registerRows));
      parts = {{main, registerRows}, {rest, rows % registerRows}};
    }
    for (auto [part, height] : parts)
      if (failed(vectorizeRegisterTiles(rewriter, part, height, bf16Pairs)))
        return failure();
    return success();
  }

  /// At most streamRows rows: a packed strip would be read by one register
  /// tile only, so packing would copy B for nothing. B is read in place,
  /// kStreamRows rows of it per step, each across the whole panel (long
  /// runs the prefetchers follow across pages), into C's rows of the panel.
  LogicalResult tileStreamed(RewriterBase &rewriter, Operation *panel,
                             int64_t k) {
    auto steps = tile(rewriter, panel, {0, 0, cacheTile(k, kStreamRows)}, {});
    if (failed(steps))
      return failure();
    auto strips = tile(rewriter, steps->tiledOps.front(), {0, tileN, 0}, {});
    if (failed(strips))
      return failure();
    return vectorizeTile(rewriter, strips->tiledOps.front());
  }

  void runOnOperation() override {
    if (!optionsAreValid())
      return;
    // Valid options: every entry parses.
    SmallVector<mlir::kina::TunedMatmul> entries;
    for (const std::string &entry : tuned)
      entries.push_back(*mlir::kina::parseTunedMatmul(entry));
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::BatchMatmulOp> batched;
    // Static shapes on tensors, the result's columns a multiple of tileN.
    auto tileable = [&](linalg::LinalgOp op, int64_t batchDims) {
      if (!op.hasPureTensorSemantics() || op.hasDynamicShape())
        return false;
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      return type.getDimSize(batchDims + 1) % tileN == 0;
    };
    getOperation().walk([&](linalg::BatchMatmulOp op) {
      if (tileable(op, 1) && !op.hasUserDefinedMaps() &&
          cast<RankedTensorType>(op.getResult(0).getType()).getDimSize(0) > 1)
        batched.push_back(op);
    });
    for (linalg::BatchMatmulOp op : batched)
      if (failed(splitBatch(rewriter, op)))
        return signalPassFailure();
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp op) {
      if (tileable(op, 0))
        matmuls.push_back(op);
    });
    for (linalg::MatmulOp matmul : matmuls) {
      auto type = cast<RankedTensorType>(matmul.getResult(0).getType());
      int64_t m = type.getDimSize(0), n = type.getDimSize(1);
      int64_t k =
          cast<RankedTensorType>(matmul.getInputs()[0].getType()).getDimSize(1);
      bool streamed = m <= streamRows;
      // A BF16 product on vdpbf16ps where the CPU has it: over K/2 pairs,
      // whose packed rows are as many bytes as an f32 row (the same tiles).
      Operation *op = matmul;
      bool bf16Pairs = false;
      if (bf16Dot && !streamed && tileN % mlir::kina::kPairProductLanes == 0) {
        FailureOr<linalg::GenericOp> paired =
            mlir::kina::pairBF16Product(rewriter, matmul);
        if (succeeded(paired)) {
          op = *paired;
          bf16Pairs = true;
        }
      }
      if (!bf16Pairs)
        padTransposedRows(rewriter, matmul, l1WayBytes);
      int64_t steps = bf16Pairs ? k / 2 : k;
      // Cache tiles, visited N, K, M: a K x N panel of B is reused by every
      // M tile while it is hot. The N tiles are independent: an scf.forall,
      // which kina-outline-parallel-loops hands to the thread pool, when
      // the matmul is worth waking threads for.
      mlir::kina::TunedMatmul p = parametersFor(entries, m, k, n);
      int64_t tileM0 = cacheTile(m, p.cacheM);
      int64_t tileN0 = cacheTile(n, p.cacheN, tileN);
      int64_t tileK0 = cacheTile(steps, p.cacheK);
      Operation *panel = op;
      if (streamed)
        tileN0 = widestPanel(n, tileN);
      // Narrower panels where N is one cache tile or a few: a 256-column
      // product (the small GPT's every matmul) ran on one thread.
      int64_t panelWidth = tileN0;
      while (n / panelWidth < kMinPanels && panelWidth > kMinPanelWidth &&
             n % (panelWidth / 2) == 0)
        panelWidth /= 2;
      if (m * n * k >= parallelThreshold && n / panelWidth > 1) {
        tileN0 = panelWidth;
        FailureOr<Operation *> split = splitColumns(rewriter, op, tileN0);
        if (failed(split))
          return signalPassFailure();
        panel = *split;
        tileN0 = 0;
      }
      if (failed(streamed ? tileStreamed(rewriter, panel, k)
                          : tilePacked(rewriter, panel, tileM0, tileN0, tileK0,
                                       p.tileM, bf16Pairs)))
        return signalPassFailure();
    }
    // What stays loops contracts with FMAs too.
    SmallVector<linalg::LinalgOp> plain;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureTensorSemantics() &&
          isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType())))
        plain.push_back(op);
    });
    for (linalg::LinalgOp op : plain)
      if (failed(contractWithFma(rewriter, op)))
        return signalPassFailure();
    // vector.contract of the register tile as outer products; transfers
    // with permutation maps as plain ones.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
