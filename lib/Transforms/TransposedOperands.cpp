//===- TransposedOperands.cpp - Matmul operands read through a transpose --===//

#include "TransposedOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

/// a + b, folded when both are constants.
static OpFoldResult add(RewriterBase &rewriter, Location loc, OpFoldResult a,
                        OpFoldResult b) {
  std::optional<int64_t> x = getConstantIntValue(a), y = getConstantIntValue(b);
  if (x && y)
    return rewriter.getIndexAttr(*x + *y);
  if (x == 0)
    return b;
  if (y == 0)
    return a;
  return arith::AddIOp::create(
             rewriter, loc, getValueOrCreateConstantIndexOp(rewriter, loc, a),
             getValueOrCreateConstantIndexOp(rewriter, loc, b))
      .getResult();
}

std::optional<mlir::kina::TransposedSlice>
mlir::kina::sliceOfTranspose(RewriterBase &rewriter, Value slice) {
  SmallVector<tensor::ExtractSliceOp> chain;
  Value view = slice;
  while (auto s = view.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (s.getSourceType().getRank() != 2 || s.getType().getRank() != 2 ||
        !s.hasUnitStride())
      return std::nullopt;
    chain.push_back(s);
    view = s.getSource();
  }
  auto transpose = view.getDefiningOp<linalg::TransposeOp>();
  if (chain.empty() || !transpose || !transpose.hasPureTensorSemantics() ||
      transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
    return std::nullopt;
  Location loc = slice.getLoc();
  OpFoldResult row = rewriter.getIndexAttr(0), column = row;
  for (tensor::ExtractSliceOp s : chain) {
    SmallVector<OpFoldResult> offsets = s.getMixedOffsets();
    row = add(rewriter, loc, row, offsets[0]);
    column = add(rewriter, loc, column, offsets[1]);
  }
  SmallVector<OpFoldResult> sizes = chain.front().getMixedSizes();
  return TransposedSlice{transpose.getInput(), {column, row},
                         {sizes[1], sizes[0]}};
}

/// `slice` of its source, unit strides.
static Value extract(RewriterBase &rewriter, Location loc,
                     const mlir::kina::TransposedSlice &slice) {
  OpFoldResult one = rewriter.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(rewriter, loc, slice.source,
                                        slice.offsets, slice.sizes,
                                        ArrayRef<OpFoldResult>{one, one});
}

Value mlir::kina::packTransposedStrips(RewriterBase &rewriter, Location loc,
                                       const TransposedSlice &block,
                                       int64_t width) {
  // W's N x K block as strips x width x K; each strip transposed.
  Value rows = extract(rewriter, loc, block);
  auto type = cast<RankedTensorType>(rows.getType());
  int64_t n = type.getDimSize(0), k = type.getDimSize(1);
  Type f32 = type.getElementType();
  Value strips = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({n / width, width, k}, f32), rows,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value packed = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{n / width, k, width}, f32);
  return linalg::TransposeOp::create(rewriter, loc, strips, packed,
                                     ArrayRef<int64_t>{0, 2, 1})
      ->getResult(0);
}

Value mlir::kina::columnFromRow(RewriterBase &rewriter, Location loc,
                                const TransposedSlice &column) {
  Value row = extract(rewriter, loc, column);
  auto type = cast<RankedTensorType>(row.getType());
  int64_t height = type.getDimSize(1);
  Type f32 = type.getElementType();
  Value run = tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get({height}, f32), row,
      ArrayRef<ReassociationIndices>{{0, 1}});
  return tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({height, 1}, f32), run,
      ArrayRef<ReassociationIndices>{{0, 1}});
}
