//===- DataMovement.cpp - slice, concat, gather, broadcast, reshape -------===//
//
// Ops that move data without arithmetic. Static concat is a chain of
// insert_slice into an empty tensor (the design sections' "host
// insert_slice"); gather clamps ids and asserts that it did not have to.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "Kina/Conversion/KinaToLinalg.h"
#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

    // All ids in range: an and-reduction over every id.
    auto inRange = [&](OpBuilder &b, Location l, Value id) -> Value {
      Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(idType));
      Value rowCount =
          arith::ConstantOp::create(b, l, b.getIntegerAttr(idType, rows));
      return arith::AndIOp::create(
          b, l,
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, id, zero),
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, id, rowCount));
    };
    Value allInRange;
    if (idRank == 0) {
      Value id = tensor::ExtractOp::create(rewriter, loc, ids, ValueRange{});
      allInRange = inRange(rewriter, loc, id);
    } else {
      auto flagType = RankedTensorType::get({}, rewriter.getI1Type());
      Value init =
          filledTensor(rewriter, loc, flagType, rewriter.getBoolAttr(true));
      SmallVector<int64_t> allDims;
      for (int64_t d = 0; d < idRank; ++d)
        allDims.push_back(d);
      Value all = linalg::ReduceOp::create(
                      rewriter, loc, ValueRange{ids}, ValueRange{init}, allDims,
                      [&](OpBuilder &b, Location l, ValueRange args) {
                        Value ok = arith::AndIOp::create(
                            b, l, inRange(b, l, args[0]), args[1]);
                        linalg::YieldOp::create(b, l, ValueRange{ok});
                      })
                      .getResult(0);
      allInRange = tensor::ExtractOp::create(rewriter, loc, all, ValueRange{});
    }
    cf::AssertOp::create(rewriter, loc, allInRange, kGatherAssertMessage);
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

/// Row-major reshape: one collapse_shape or expand_shape when the dims
/// group (`[2, 3, 4] -> [6, 4]`), else collapse to one dim and expand to
/// the target. All are views of a contiguous buffer, so no data moves.
struct ReshapeLowering : KinaPattern<ReshapeOp> {
  using KinaPattern::KinaPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value value = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(value.getType());
    RankedTensorType type = resultType(op);
    if (inputType.getRank() > type.getRank() && type.getRank() > 0) {
      if (auto groups = getReassociationIndicesForReshape(inputType, type)) {
        rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, type, value,
                                                             *groups);
        return success();
      }
    }
    if (type.getRank() > inputType.getRank() && inputType.getRank() > 0) {
      if (auto groups = getReassociationIndicesForReshape(type, inputType)) {
        rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, type, value,
                                                           *groups);
        return success();
      }
    }
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
                  ? Value(tensor::ExpandShapeOp::create(rewriter, loc, flatType,
                                                        value, allInOne(0)))
                  : Value(tensor::CollapseShapeOp::create(
                        rewriter, loc, value, allInOne(inputType.getRank())));
    if (type.getRank() != 1)
      value = type.getRank() == 0
                  ? Value(tensor::CollapseShapeOp::create(rewriter, loc, value,
                                                          allInOne(0)))
                  : Value(tensor::ExpandShapeOp::create(
                        rewriter, loc, type, value, allInOne(type.getRank())));
    rewriter.replaceOp(op, value);
    return success();
  }
};

} // namespace

void mlir::kina::populateKinaDataMovementToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<SliceLowering, ConcatLowering, GatherLowering, BroadcastLowering,
               TransposeLowering, ReshapeLowering>(converter,
                                                   patterns.getContext());
}
