//===- BF16PairProducts.cpp - BF16 products on vdpbf16ps ------------------===//
//
// vdpbf16ps adds, per 32-bit lane, the product of the odd BF16 pair and
// then the even one's, each rounded once (Intel SDM; this project's model
// in docs/language.md matched the instruction in 32M of 32M lanes on a
// Xeon with AVX512_BF16). The widened f32 form that kina-convert-to-linalg
// gives every CPU already adds in that order, so the kernel built here is
// the same sum; the two differ only where vdpbf16ps flushes a denormal.
//
//===----------------------------------------------------------------------===//

#include "BF16PairProducts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;

// Bits of one BF16 half of a packed pair.
static constexpr int64_t kHalfBits = 16;

/// The BF16 tensor, split into [..., K/2, 2, ...] pairs with K at `kDim`,
/// that `widened` widens with each pair swapped (widenInBF16PairOrder in
/// KinaToLinalg): an even K only, whose widening is one reshaped generic.
static std::optional<Value> pairedSource(Value widened, int64_t kDim) {
  auto collapse = widened.getDefiningOp<tensor::CollapseShapeOp>();
  auto generic = collapse ? collapse.getSrc().getDefiningOp<linalg::GenericOp>()
                          : linalg::GenericOp();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0)
    return std::nullopt;
  Value paired = generic.getDpsInputs()[0];
  auto expand = paired.getDefiningOp<tensor::ExpandShapeOp>();
  auto type = cast<RankedTensorType>(paired.getType());
  if (!expand || !type.getElementType().isBF16() || type.getRank() != 3 ||
      type.getDimSize(kDim + 1) != 2 ||
      expand.getReassociationIndices() != collapse.getReassociationIndices())
    return std::nullopt;
  Block &body = generic.getRegion().front();
  auto extend = dyn_cast<arith::ExtFOp>(body.front());
  if (!extend || extend.getIn() != body.getArgument(0) ||
      &body.front() != body.getTerminator()->getPrevNode() ||
      body.getTerminator()->getOperand(0) != extend.getResult())
    return std::nullopt;
  // The input read with the pair swapped, the output in order.
  MLIRContext *context = widened.getContext();
  SmallVector<AffineExpr> swapped;
  for (int64_t d = 0; d < 3; ++d)
    swapped.push_back(d == kDim + 1 ? 1 - getAffineDimExpr(d, context)
                                    : getAffineDimExpr(d, context));
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (maps[0] != AffineMap::get(3, 0, swapped, context) ||
      !maps[1].isIdentity())
    return std::nullopt;
  return paired;
}

/// `paired` ([..., K/2, 2, ...] BF16, the pair at `pairDim`) as
/// [..., K/2, ...] i32, the even element's bits in the low half: the two
/// halves are strided views, combined by one elementwise loop (which the
/// threads split and LLVM vectorizes; a reduction over the pair ran
/// scalar, 12% of a 128 x 768 x 768 product).
static Value packPairs(OpBuilder &b, Location loc, Value paired,
                       int64_t pairDim) {
  auto type = cast<RankedTensorType>(paired.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + pairDim);
  auto halfType = RankedTensorType::get(shape, type.getElementType());
  auto half = [&](int64_t which) -> Value {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
        strides(rank, b.getIndexAttr(1)), sizes;
    offsets[pairDim] = b.getIndexAttr(which);
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(b.getIndexAttr(d == pairDim ? 1 : type.getDimSize(d)));
    return tensor::ExtractSliceOp::create(b, loc, halfType, paired, offsets,
                                          sizes, strides);
  };
  Type i16 = b.getI16Type(), i32 = b.getI32Type();
  Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>(shape), i32);
  int64_t kept = rank - 1;
  SmallVector<AffineMap> maps(3, b.getMultiDimIdentityMap(kept));
  SmallVector<utils::IteratorType> iterators(kept,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{half(0), half(1)},
             ValueRange{init}, maps, iterators,
             [&](OpBuilder &nested, Location l, ValueRange args) {
               auto bits = [&](Value value) -> Value {
                 return arith::ExtUIOp::create(
                     nested, l, i32,
                     arith::BitcastOp::create(nested, l, i16, value));
               };
               Value high = arith::ShLIOp::create(
                   nested, l, bits(args[1]),
                   arith::ConstantOp::create(
                       nested, l, nested.getI32IntegerAttr(kHalfBits)));
               linalg::YieldOp::create(
                   nested, l,
                   Value(arith::OrIOp::create(nested, l, bits(args[0]), high)));
             })
      .getResult(0);
}

FailureOr<linalg::GenericOp>
mlir::kina::pairBF16Product(RewriterBase &rewriter, linalg::MatmulOp matmul) {
  if (matmul.hasUserDefinedMaps())
    return failure();
  std::optional<Value> lhs = pairedSource(matmul.getInputs()[0], 1);
  std::optional<Value> rhs = pairedSource(matmul.getInputs()[1], 0);
  if (!lhs || !rhs)
    return failure();
  Location loc = matmul.getLoc();
  rewriter.setInsertionPoint(matmul);
  Value a = packPairs(rewriter, loc, *lhs, 2);
  Value b = packPairs(rewriter, loc, *rhs, 1);
  Value init = matmul.getOutputs()[0];
  MLIRContext *context = rewriter.getContext();
  AffineExpr m = getAffineDimExpr(0, context), n = getAffineDimExpr(1, context),
             k = getAffineDimExpr(2, context);
  SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {m, k}, context),
                                 AffineMap::get(3, 0, {k, n}, context),
                                 AffineMap::get(3, 0, {m, n}, context)};
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel,
                                                utils::IteratorType::parallel,
                                                utils::IteratorType::reduction};
  // The scalar form of the tiles' vdpbf16ps: the odd pair's product, then
  // the even one's, each one rounding (a product of BF16s is exact).
  auto product = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{a, b},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location l, ValueRange args) {
        auto half = [&](Value pair, bool high) -> Value {
          Value bits = pair;
          if (high)
            bits = arith::ShRUIOp::create(
                nested, l, bits,
                arith::ConstantOp::create(nested, l,
                                          nested.getI32IntegerAttr(kHalfBits)));
          bits = arith::TruncIOp::create(nested, l, nested.getI16Type(), bits);
          Value value =
              arith::BitcastOp::create(nested, l, nested.getBF16Type(), bits);
          return arith::ExtFOp::create(nested, l, nested.getF32Type(), value);
        };
        Value sum = math::FmaOp::create(nested, l, half(args[0], true),
                                        half(args[1], true), args[2]);
        sum = math::FmaOp::create(nested, l, half(args[0], false),
                                  half(args[1], false), sum);
        linalg::YieldOp::create(nested, l, sum);
      });
  rewriter.replaceOp(matmul, product.getResults());
  return product;
}

LogicalResult mlir::kina::vectorizePairTile(RewriterBase &rewriter,
                                            linalg::LinalgOp tile) {
  if (!tile.hasPureTensorSemantics() || tile.hasDynamicShape())
    return failure();
  Value a = tile.getDpsInputs()[0], b = tile.getDpsInputs()[1];
  Value c = tile.getDpsInits()[0];
  auto cType = cast<RankedTensorType>(c.getType());
  int64_t rows = cType.getDimSize(0), columns = cType.getDimSize(1);
  int64_t steps = cast<RankedTensorType>(a.getType()).getDimSize(1);
  if (columns % kPairProductLanes)
    return failure();
  int64_t groups = columns / kPairProductLanes;
  Location loc = tile.getLoc();
  rewriter.setInsertionPoint(tile);
  Type f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type();
  auto lanes = VectorType::get({kPairProductLanes}, f32);
  auto words = VectorType::get({kPairProductLanes}, i32);
  auto pairs = VectorType::get({2 * kPairProductLanes}, rewriter.getBF16Type());
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  Value zero = index(0);
  // The accumulator tile: one read and one write, which subset hoisting
  // carries in registers through the K loop.
  Value acc = vector::TransferReadOp::create(
      rewriter, loc, VectorType::get({rows, columns}, f32), c,
      ValueRange{zero, zero},
      arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(f32)),
      ArrayRef<bool>{true, true});
  SmallVector<SmallVector<Value>> sums(rows);
  for (int64_t r = 0; r < rows; ++r) {
    Value row =
        vector::ExtractOp::create(rewriter, loc, acc, ArrayRef<int64_t>{r});
    for (int64_t g = 0; g < groups; ++g)
      sums[r].push_back(vector::ExtractStridedSliceOp::create(
          rewriter, loc, row, ArrayRef<int64_t>{g * kPairProductLanes},
          ArrayRef<int64_t>{kPairProductLanes}, ArrayRef<int64_t>{1}));
  }
  Value noWord =
      arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(i32));
  for (int64_t s = 0; s < steps; ++s) {
    Value bRow = vector::TransferReadOp::create(
        rewriter, loc, VectorType::get({columns}, i32), b,
        ValueRange{index(s), zero}, noWord, ArrayRef<bool>{true});
    SmallVector<Value> bPairs;
    for (int64_t g = 0; g < groups; ++g)
      bPairs.push_back(vector::BitCastOp::create(
          rewriter, loc, pairs,
          vector::ExtractStridedSliceOp::create(
              rewriter, loc, bRow, ArrayRef<int64_t>{g * kPairProductLanes},
              ArrayRef<int64_t>{kPairProductLanes}, ArrayRef<int64_t>{1})));
    for (int64_t r = 0; r < rows; ++r) {
      Value word = tensor::ExtractOp::create(rewriter, loc, a,
                                             ValueRange{index(r), index(s)});
      Value aPair = vector::BitCastOp::create(
          rewriter, loc, pairs,
          vector::BroadcastOp::create(rewriter, loc, words, word));
      for (int64_t g = 0; g < groups; ++g)
        sums[r][g] = x86vector::DotBF16Op::create(rewriter, loc, lanes,
                                                  sums[r][g], aPair, bPairs[g]);
    }
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < groups; ++g)
      acc = vector::InsertStridedSliceOp::create(
          rewriter, loc, sums[r][g], acc,
          ArrayRef<int64_t>{r, g * kPairProductLanes}, ArrayRef<int64_t>{1});
  Value written = vector::TransferWriteOp::create(rewriter, loc, acc, c,
                                                  ValueRange{zero, zero},
                                                  ArrayRef<bool>{true, true})
                      .getResult();
  rewriter.replaceOp(tile, written);
  return success();
}
