//===- CollectivesToRuntime.cpp - Per-device collectives to runtime calls -===//
//
// A collective of a per-device (`@local`) function becomes a call of
// `kina_collective_<name>` (lib/Runtime/Collectives.c): the input as a
// read-only buffer, a fresh buffer for the result (all_gather: the result
// only, holding the input in place), and the layout and the group as i64
// numbers. Buffers pass as addresses so that one declaration
// serves every shape; the runtime knows the calling device. Collectives in
// the global view are the partitioner's to remove, not lowered here.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "Kina/ABI/ABI.h"
#include "Kina/Conversion/KinaToLinalg.h"
#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::kina;
using namespace mlir::kina::detail;

namespace {

/// The devices a collective over one mesh axis involves, as the runtime
/// numbers them (ABI.h, struct kina_device).
struct Group {
  int64_t size, stride;
};

/// A local tensor seen as [outer][the cut axis and what follows].
struct AxisView {
  int64_t outer = 1, inner = 1; // elements
};

AxisView viewAt(ArrayRef<int64_t> shape, int64_t axis) {
  AxisView view;
  for (auto [d, dim] : llvm::enumerate(shape))
    (int64_t(d) < axis ? view.outer : view.inner) *= dim;
  return view;
}

/// The runtime's number for the element type (ABI.h: as kina::DType).
int64_t dtypeCode(Type element) { return int64_t(*getDType(element)); }

int64_t elementBytes(Type element) {
  return mlir::kina::dtypeInfo(*getDType(element)).bytes;
}

bool isPerDevice(Operation *op) {
  return cast<KinaTensorType>(op->getResult(0).getType())
      .getPlacement()
      .isLocal();
}

/// The group of `op`'s mesh axis: a match failure when `op` is not
/// per-device (the host form lowers it elsewhere), an error on `op` when the
/// module's mesh lacks the axis.
template <typename Op>
FailureOr<Group> perDeviceGroup(Op op, PatternRewriter &rewriter) {
  if (!isPerDevice(op))
    return rewriter.notifyMatchFailure(op, "not a per-device collective");
  MeshOp mesh = MeshOp::lookup(op);
  std::optional<int64_t> size =
      mesh ? mesh.getAxisSize(op.getOver()) : std::nullopt;
  if (!size)
    return op.emitOpError("names mesh axis '")
           << op.getOver() << "', which the module's mesh does not have";
  return Group{*size, *mesh.getAxisStride(op.getOver())};
}

/// Where lowering a per-device collective starts: its group, its location
/// and its local input and result types.
struct CollectiveSite {
  Group group;
  Location loc;
  RankedTensorType input, result;
};

template <typename Op>
FailureOr<CollectiveSite> collectiveSite(Op op, Value input,
                                         RankedTensorType result,
                                         PatternRewriter &rewriter) {
  FailureOr<Group> group = perDeviceGroup(op, rewriter);
  if (failed(group))
    return failure();
  return CollectiveSite{*group, op.getLoc(),
                        cast<RankedTensorType>(input.getType()), result};
}

Value address(OpBuilder &b, Location loc, Value buffer) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

Value i64(OpBuilder &b, Location loc, int64_t number) {
  return arith::ConstantIntOp::create(b, loc, number, /*width=*/64);
}

MemRefType bufferType(RankedTensorType type) {
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// `func.func private @<name>(i64...) -> (i64 x results)`, once per module.
func::FuncOp declareRuntime(OpBuilder &b, Operation *op, StringRef name,
                            size_t arity, size_t results = 0) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(
      b, module.getLoc(), name,
      b.getFunctionType(SmallVector<Type>(arity, b.getI64Type()),
                        SmallVector<Type>(results, b.getI64Type())));
  fn.setPrivate();
  return fn;
}

/// Lowers one collective op `Op`; `arguments` gives the numbers after the
/// two buffers, from the op, its local input type and its group.
template <typename Op> struct CollectiveLowering : KinaPattern<Op> {
  using Arguments = std::function<SmallVector<int64_t>(
      Op, RankedTensorType input, Group group)>;

  CollectiveLowering(TypeConverter &converter, MLIRContext *context,
                     StringRef runtimeName, Arguments arguments)
      : KinaPattern<Op>(converter, context), runtimeName(runtimeName),
        arguments(std::move(arguments)) {}

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<CollectiveSite> site = collectiveSite(
        op, adaptor.getInput(), this->resultType(op), rewriter);
    if (failed(site))
      return failure();
    auto [group, loc, input, result] = *site;
    Value in = bufferization::ToBufferOp::create(
        rewriter, loc, bufferType(input), adaptor.getInput(),
        /*read_only=*/true);
    Value out = memref::AllocOp::create(rewriter, loc, bufferType(result));
    SmallVector<Value> operands = {address(rewriter, loc, in),
                                   address(rewriter, loc, out)};
    for (int64_t number : arguments(op, input, group))
      operands.push_back(i64(rewriter, loc, number));
    func::CallOp::create(
        rewriter, loc,
        declareRuntime(rewriter, op, runtimeName, operands.size()), operands);
    rewriter.replaceOp(op, bufferization::ToTensorOp::create(
                               rewriter, loc, result, out, /*restrict=*/true,
                               /*writable=*/true));
    return success();
  }

private:
  std::string runtimeName;
  Arguments arguments;
};

/// all_gather: the result is a tensor made at the function's entry, with
/// this device's offset on the axis (`kina_collective_coordinate`); the
/// input is inserted there and the runtime fills in the other members'
/// blocks around it. Because the result and the offset come first,
/// `eliminate-empty-tensors` lets whatever computes the input into a fresh
/// tensor (a matmul's output) compute it in its place in the result: the
/// device's own block is never copied.
struct AllGatherLowering : KinaPattern<AllGatherOp> {
  using KinaPattern::KinaPattern;

  LogicalResult
  matchAndRewrite(AllGatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<CollectiveSite> site =
        collectiveSite(op, adaptor.getInput(), resultType(op), rewriter);
    if (failed(site))
      return failure();
    auto [group, loc, input, result] = *site;
    int64_t axis = op.getAxis();

    Value offset, gathered;
    {
      OpBuilder::InsertionGuard guard(rewriter);
      auto fn = op->getParentOfType<FunctionOpInterface>();
      rewriter.setInsertionPointToStart(&fn.getFunctionBody().front());
      Value coordinate =
          func::CallOp::create(
              rewriter, loc,
              declareRuntime(rewriter, op,
                             KINA_COLLECTIVE_PREFIX "coordinate", 2, 1),
              ValueRange{i64(rewriter, loc, group.size),
                         i64(rewriter, loc, group.stride)})
              .getResult(0);
      offset = arith::MulIOp::create(
          rewriter, loc,
          arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                     coordinate),
          arith::ConstantIndexOp::create(rewriter, loc,
                                         input.getDimSize(axis)));
      // Made at the entry so that the op computing the block can compute
      // it in its slot; a block that is an argument (a weight split at
      // rest, gathered for its use) has no producer, and its result is
      // made where it is gathered, so that it is not held from the entry
      // (the backward of `reshard_after_forward` gathers every weight a
      // second time).
      if (isa<BlockArgument>(adaptor.getInput()))
        rewriter.setInsertionPoint(op);
      gathered = emptyTensor(rewriter, loc, result);
    }
    SmallVector<OpFoldResult> offsets(input.getRank(),
                                      rewriter.getIndexAttr(0));
    offsets[axis] = offset;
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(rewriter.getContext(), input.getShape());
    SmallVector<OpFoldResult> strides(input.getRank(),
                                      rewriter.getIndexAttr(1));
    Value placed = tensor::InsertSliceOp::create(
        rewriter, loc, adaptor.getInput(), gathered, offsets, sizes, strides);
    Value out = bufferization::ToBufferOp::create(rewriter, loc,
                                                  bufferType(result), placed);

    AxisView view = viewAt(input.getShape(), axis);
    SmallVector<Value> operands = {
        address(rewriter, loc, out), i64(rewriter, loc, view.outer),
        i64(rewriter, loc,
            view.inner * elementBytes(input.getElementType())),
        i64(rewriter, loc, group.size), i64(rewriter, loc, group.stride)};
    func::CallOp::create(rewriter, loc,
                         declareRuntime(rewriter, op,
                                        KINA_COLLECTIVE_PREFIX "all_gather",
                                        operands.size()),
                         operands);
    rewriter.replaceOp(op, bufferization::ToTensorOp::create(
                               rewriter, loc, result, out, /*restrict=*/true,
                               /*writable=*/true));
    return success();
  }
};

} // namespace

void mlir::kina::populateKinaCollectivesToRuntimePatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  // [outer][block bytes] on the cut (or moved) axis.
  auto bytesAt = [](RankedTensorType input, int64_t axis, int64_t per) {
    AxisView view = viewAt(input.getShape(), axis);
    return std::pair(view.outer,
                     view.inner / per * elementBytes(input.getElementType()));
  };
  patterns.add<AllGatherLowering>(converter, context);
  patterns.add<CollectiveLowering<AllSliceOp>>(
      converter, context, KINA_COLLECTIVE_PREFIX "all_slice",
      [=](AllSliceOp op, RankedTensorType input, Group group) {
        auto [outer, block] = bytesAt(input, op.getAxis(), group.size);
        return SmallVector<int64_t>{outer, block, group.size, group.stride};
      });
  patterns.add<CollectiveLowering<AllReduceOp>>(
      converter, context, KINA_COLLECTIVE_PREFIX "all_reduce",
      [](AllReduceOp op, RankedTensorType input, Group group) {
        int64_t kind = op.getKind() == ReductionKind::max ? KINA_REDUCE_MAX
                                                          : KINA_REDUCE_SUM;
        return SmallVector<int64_t>{input.getNumElements(),
                                    dtypeCode(input.getElementType()), kind,
                                    group.size, group.stride};
      });
  patterns.add<CollectiveLowering<AllToAllOp>>(
      converter, context, KINA_COLLECTIVE_PREFIX "all_to_all",
      [=](AllToAllOp op, RankedTensorType input, Group group) {
        auto [toOuter, toBlock] = bytesAt(input, op.getTo(), group.size);
        auto [fromOuter, fromBlock] = bytesAt(
            RankedTensorType::get(
                cast<KinaTensorType>(op.getType()).getShape(),
                input.getElementType()),
            op.getFrom(), group.size);
        return SmallVector<int64_t>{toOuter,   toBlock,    fromOuter,
                                    fromBlock, group.size, group.stride};
      });
  patterns.add<CollectiveLowering<PermuteOp>>(
      converter, context, KINA_COLLECTIVE_PREFIX "permute",
      [](PermuteOp op, RankedTensorType input, Group group) {
        return SmallVector<int64_t>{
            input.getNumElements() * elementBytes(input.getElementType()),
            static_cast<int64_t>(op.getShift()), op.getCyclic() ? 1 : 0,
            group.size, group.stride};
      });
  patterns.add<CollectiveLowering<ReduceScatterOp>>(
      converter, context, KINA_COLLECTIVE_PREFIX "reduce_scatter",
      [](ReduceScatterOp op, RankedTensorType input, Group group) {
        AxisView view = viewAt(input.getShape(), op.getAxis());
        return SmallVector<int64_t>{view.outer, view.inner / group.size,
                                    dtypeCode(input.getElementType()),
                                    group.size, group.stride};
      });
}
