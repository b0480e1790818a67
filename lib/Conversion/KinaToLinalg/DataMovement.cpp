//===- DataMovement.cpp - slice, concat, gather, scatter_add, reshape, ... ===//
//
// Ops that move data (scatter_add also adds the rows it moves). Static
// concat is a chain of insert_slice into an empty tensor (the design
// sections' "host insert_slice"); gather and scatter_add clamp ids and
// assert that they did not have to.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "Kina/Conversion/KinaToLinalg.h"
#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::kina;
using namespace mlir::kina::detail;

namespace {

/// What a failed gather check says, were it ever to reach an abort.
constexpr llvm::StringLiteral kGatherAssertMessage =
    "kina.gather: an id is outside [0, rows)";

/// Offsets, sizes and unit strides of the box `[offset, offset + size)` on
/// `axis` and the whole of every other dim of `shape`.
static void axisBox(OpBuilder &b, ArrayRef<int64_t> shape, int64_t axis,
                    int64_t offset, SmallVectorImpl<OpFoldResult> &offsets,
                    SmallVectorImpl<OpFoldResult> &sizes,
                    SmallVectorImpl<OpFoldResult> &strides) {
  for (auto [d, dim] : llvm::enumerate(shape)) {
    offsets.push_back(b.getIndexAttr(int64_t(d) == axis ? offset : 0));
    sizes.push_back(b.getIndexAttr(dim));
    strides.push_back(b.getIndexAttr(1));
  }
}

struct SliceLowering : KinaPattern<SliceOp> {
  using KinaPattern::KinaPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    axisBox(rewriter, type.getShape(), op.getAxis(), op.getStart(), offsets,
            sizes, strides);
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, type, adaptor.getInput(), offsets, sizes, strides);
    return success();
  }
};

struct ConcatLowering : KinaPattern<ConcatOp> {
  using KinaPattern::KinaPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    Value result = emptyTensor(rewriter, loc, resultType(op));
    int64_t offset = 0;
    for (Value input : adaptor.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      SmallVector<OpFoldResult> offsets, sizes, strides;
      axisBox(rewriter, inputType.getShape(), axis, offset, offsets, sizes,
              strides);
      result = tensor::InsertSliceOp::create(rewriter, loc, input, result,
                                             offsets, sizes, strides);
      offset += inputType.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Whether every element of `ids` is in [0, rows): an and-reduction.
static Value allIdsInRange(OpBuilder &builder, Location loc, Value ids,
                           int64_t rows) {
  auto idsType = cast<RankedTensorType>(ids.getType());
  Type idType = idsType.getElementType();
  int64_t idRank = idsType.getRank();
  auto inRange = [&](OpBuilder &b, Location l, Value id) -> Value {
    Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(idType));
    Value rowCount =
        arith::ConstantOp::create(b, l, b.getIntegerAttr(idType, rows));
    return arith::AndIOp::create(
        b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, id, zero),
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, id, rowCount));
  };
  if (idRank == 0)
    return inRange(builder, loc,
                   tensor::ExtractOp::create(builder, loc, ids, ValueRange{}));
  auto flagType = RankedTensorType::get({}, builder.getI1Type());
  Value init =
      filledTensor(builder, loc, flagType, builder.getBoolAttr(true));
  SmallVector<int64_t> allDims;
  for (int64_t d = 0; d < idRank; ++d)
    allDims.push_back(d);
  Value all = linalg::ReduceOp::create(
                  builder, loc, ValueRange{ids}, ValueRange{init}, allDims,
                  [&](OpBuilder &b, Location l, ValueRange args) {
                    Value ok = arith::AndIOp::create(
                        b, l, inRange(b, l, args[0]), args[1]);
                    linalg::YieldOp::create(b, l, ValueRange{ok});
                  })
                  .getResult(0);
  return tensor::ExtractOp::create(builder, loc, all, ValueRange{});
}

/// `value` reshaped row-major to `type`: one collapse_shape or expand_shape
/// when the dims group (`[2, 3, 4] -> [6, 4]`), else collapsed to one dim
/// and expanded to the target. All are views of a contiguous buffer.
static Value reshapedTo(OpBuilder &b, Location loc, Value value,
                        RankedTensorType type) {
  auto inputType = cast<RankedTensorType>(value.getType());
  if (inputType == type)
    return value;
  if (inputType.getRank() > type.getRank() && type.getRank() > 0)
    if (auto groups = getReassociationIndicesForReshape(inputType, type))
      return tensor::CollapseShapeOp::create(b, loc, type, value, *groups);
  if (type.getRank() > inputType.getRank() && inputType.getRank() > 0)
    if (auto groups = getReassociationIndicesForReshape(type, inputType))
      return tensor::ExpandShapeOp::create(b, loc, type, value, *groups);
  auto flatType =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  auto allInOne = [](int64_t rank) {
    SmallVector<ReassociationIndices> groups;
    if (rank > 0) {
      groups.emplace_back();
      for (int64_t d = 0; d < rank; ++d)
        groups.back().push_back(d);
    }
    return groups;
  };
  if (inputType.getRank() != 1)
    value = inputType.getRank() == 0
                ? Value(tensor::ExpandShapeOp::create(b, loc, flatType, value,
                                                      allInOne(0)))
                : Value(tensor::CollapseShapeOp::create(
                      b, loc, value, allInOne(inputType.getRank())));
  if (type.getRank() != 1)
    value = type.getRank() == 0
                ? Value(tensor::CollapseShapeOp::create(b, loc, value,
                                                        allInOne(0)))
                : Value(tensor::ExpandShapeOp::create(
                      b, loc, type, value, allInOne(type.getRank())));
  return value;
}

/// result[i..., j...] = table[clamp(ids[i...]), j...], and a `cf.assert`
/// that every id was in [0, rows) (kina-asserts-to-status returns it).
struct GatherLowering : KinaPattern<GatherOp> {
  using KinaPattern::KinaPattern;

  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value table = adaptor.getTable(), ids = adaptor.getIds();
    auto tableType = cast<RankedTensorType>(table.getType());
    auto idsType = cast<RankedTensorType>(ids.getType());
    Type idType = idsType.getElementType();
    RankedTensorType type = resultType(op);
    int64_t idRank = idsType.getRank();
    int64_t rows = tableType.getDimSize(0);

    // Read at the clamped id: never out of bounds, whatever the id.
    SmallVector<AffineExpr> leading;
    for (int64_t d = 0; d < idRank; ++d)
      leading.push_back(rewriter.getAffineDimExpr(d));
    auto idsMap = AffineMap::get(type.getRank(), 0, leading, getContext());
    Value gathered = parallelGeneric(
        rewriter, loc, type, ids, idsMap,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(idType));
          Value last = arith::ConstantOp::create(
              b, l, b.getIntegerAttr(idType, rows - 1));
          Value clamped = arith::MinSIOp::create(
              b, l, arith::MaxSIOp::create(b, l, args[0], zero), last);
          SmallVector<Value> indices{
              arith::IndexCastOp::create(b, l, b.getIndexType(), clamped)};
          for (int64_t d = idRank; d < type.getRank(); ++d)
            indices.push_back(linalg::IndexOp::create(b, l, d));
          return tensor::ExtractOp::create(b, l, table, indices).getResult();
        });

    cf::AssertOp::create(rewriter, loc,
                         allIdsInRange(rewriter, loc, ids, rows),
                         kGatherAssertMessage);
    rewriter.replaceOp(op, gathered);
    return success();
  }
};

/// NumPy broadcasting: `linalg.broadcast` when only leading dims are added;
/// a generic that reads index 0 of every stretched size-1 dim otherwise.
struct BroadcastLowering : KinaPattern<BroadcastOp> {
  using KinaPattern::KinaPattern;
  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    RankedTensorType type = resultType(op);
    int64_t offset = type.getRank() - inputType.getRank();
    // A generic (not linalg.broadcast), so that elementwise fusion can
    // read the operand in place instead of materializing its copy.
    SmallVector<AffineExpr> exprs;
    for (auto [i, dim] : llvm::enumerate(inputType.getShape()))
      exprs.push_back(dim != type.getDimSize(offset + i)
                          ? rewriter.getAffineConstantExpr(0)
                          : rewriter.getAffineDimExpr(offset + i));
    auto map = AffineMap::get(type.getRank(), 0, exprs, getContext());
    rewriter.replaceOp(
        op, parallelGeneric(rewriter, loc, type, input, map,
                            [](OpBuilder &, Location, ValueRange args) {
                              return args[0];
                            }));
    return success();
  }
};

struct TransposeLowering : KinaPattern<TransposeOp> {
  using KinaPattern::KinaPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    rewriter.replaceOp(op, linalg::TransposeOp::create(
                               rewriter, loc, adaptor.getInput(),
                               emptyTensor(rewriter, loc, resultType(op)),
                               op.getPerm())
                               .getResult()[0]);
    return success();
  }
};

/// Row-major reshape: a view of the contiguous buffer, no data moves.
struct ReshapeLowering : KinaPattern<ReshapeOp> {
  using KinaPattern::KinaPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshapedTo(rewriter, op.getLoc(),
                                      adaptor.getInput(), resultType(op)));
    return success();
  }
};

/// table[clamp(ids[i]) * width + j] += updates[i * width + j], over the
/// flattened ids and updates in order (so repeated ids add in id order),
/// into a zero table, and a `cf.assert` that every id was in [0, rows).
/// A loop, not a linalg op: the rows it writes depend on the data.
struct ScatterAddLowering : KinaPattern<ScatterAddOp> {
  using KinaPattern::KinaPattern;

  LogicalResult
  matchAndRewrite(ScatterAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value ids = adaptor.getIds(), updates = adaptor.getUpdates();
    auto idsType = cast<RankedTensorType>(ids.getType());
    Type idType = idsType.getElementType();
    // 16-bit updates add up in f32, rounded once.
    RankedTensorType resultType = this->resultType(op);
    Type f32 = computeType(resultType);
    RankedTensorType type = resultType.clone(f32);
    updates = convertTensor(rewriter, loc, updates, f32);
    int64_t rows = op.getRows();
    int64_t count = idsType.getNumElements();
    int64_t width = type.getNumElements() / rows;

    cf::AssertOp::create(rewriter, loc,
                         allIdsInRange(rewriter, loc, ids, rows),
                         "kina.scatter_add: an id is outside [0, rows)");
    auto flat = [&](Value value, int64_t size, Type element) {
      return reshapedTo(rewriter, loc, value,
                        RankedTensorType::get({size}, element));
    };
    Value flatIds = flat(ids, count, idType);
    Value flatUpdates = flat(updates, count * width, f32);
    Value table = filledTensor(rewriter, loc,
                               RankedTensorType::get({rows * width}, f32),
                               rewriter.getZeroAttr(f32));

    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    Value zero = index(0), one = index(1);
    auto rowLoop = scf::ForOp::create(
        rewriter, loc, zero, index(count), one, ValueRange{table},
        [&](OpBuilder &b, Location l, Value i, ValueRange rowArgs) {
          Value id = tensor::ExtractOp::create(b, l, flatIds, ValueRange{i});
          Value clamped = arith::MinSIOp::create(
              b, l,
              arith::MaxSIOp::create(
                  b, l, id,
                  arith::ConstantOp::create(b, l, b.getZeroAttr(idType))),
              arith::ConstantOp::create(b, l,
                                        b.getIntegerAttr(idType, rows - 1)));
          Value widthIndex = arith::ConstantIndexOp::create(b, l, width);
          Value target = arith::MulIOp::create(
              b, l,
              arith::IndexCastOp::create(b, l, b.getIndexType(), clamped),
              widthIndex);
          Value source = arith::MulIOp::create(b, l, i, widthIndex);
          auto columnLoop = scf::ForOp::create(
              b, l, arith::ConstantIndexOp::create(b, l, 0), widthIndex,
              arith::ConstantIndexOp::create(b, l, 1), rowArgs,
              [&](OpBuilder &c, Location cl, Value j, ValueRange args) {
                Value to = arith::AddIOp::create(c, cl, target, j);
                Value from = arith::AddIOp::create(c, cl, source, j);
                Value sum = arith::AddFOp::create(
                    c, cl,
                    tensor::ExtractOp::create(c, cl, args[0], ValueRange{to}),
                    tensor::ExtractOp::create(c, cl, flatUpdates,
                                              ValueRange{from}));
                scf::YieldOp::create(
                    c, cl,
                    ValueRange{tensor::InsertOp::create(c, cl, sum, args[0],
                                                        ValueRange{to})});
              });
          scf::YieldOp::create(b, l, columnLoop.getResults());
        });
    rewriter.replaceOp(
        op, convertTensor(rewriter, loc,
                          reshapedTo(rewriter, loc, rowLoop.getResult(0), type),
                          resultType.getElementType()));
    return success();
  }
};

} // namespace

void mlir::kina::populateKinaDataMovementToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<SliceLowering, ConcatLowering, GatherLowering,
               ScatterAddLowering, BroadcastLowering, TransposeLowering,
               ReshapeLowering>(converter, patterns.getContext());
}
