//===- WriteResultsInPlace.cpp - Compute a result in its out buffer -------===//
//
// `buffer-results-to-out-params` hoists a result's allocation into the
// caller's out buffer only when the function returns the allocation
// itself. A result returned as a reshape of it (the logits, computed as a
// 128 x 32000 matmul and returned as 1 x 128 x 32000) is instead computed
// into a temporary and copied out at the end: 16 MB copied per call. Here
// the temporary becomes a reshape of the out buffer and the copy goes.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kina {
#define GEN_PASS_DEF_WRITERESULTSINPLACEPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// `copy`'s source as the reshapes that lead to it from an allocation in
/// the copy's block, the copy's source first; nothing when it is not one.
static std::optional<std::pair<memref::AllocOp, SmallVector<Operation *>>>
reshapedAllocation(memref::CopyOp copy) {
  SmallVector<Operation *> reshapes;
  Value value = copy.getSource();
  while (isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(
             value.getDefiningOp()) &&
         value.hasOneUse()) {
    reshapes.push_back(value.getDefiningOp());
    value = value.getDefiningOp()->getOperand(0);
  }
  auto alloc = value.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != copy->getBlock() ||
      !alloc.getType().hasStaticShape() ||
      !alloc.getType().getLayout().isIdentity())
    return std::nullopt;
  return std::make_pair(alloc, reshapes);
}

/// The reverse of `reshapes` (the copy's source first) applied to `out`:
/// `out` seen with the allocation's shape.
static Value undoReshapes(OpBuilder &b, Location loc, Value out,
                          ArrayRef<Operation *> reshapes) {
  for (Operation *reshape : reshapes) {
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(reshape)) {
      out = memref::CollapseShapeOp::create(b, loc, out,
                                            expand.getReassociationIndices());
      continue;
    }
    auto collapse = cast<memref::CollapseShapeOp>(reshape);
    out = memref::ExpandShapeOp::create(b, loc, collapse.getSrcType(), out,
                                        collapse.getReassociationIndices());
  }
  return out;
}

namespace {
struct WriteResultsInPlacePass
    : mlir::kina::impl::WriteResultsInPlacePassBase<WriteResultsInPlacePass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    for (auto copy : llvm::make_early_inc_range(
             function.getBody().front().getOps<memref::CopyOp>()))
      writeInPlace(copy);
  }

  /// Rewrites `copy` of a reshaped temporary into an out argument that
  /// nothing else touches, when nothing uses the temporary after it.
  void writeInPlace(memref::CopyOp copy) {
    auto out = dyn_cast<BlockArgument>(copy.getTarget());
    if (!out || out.getOwner() != copy->getBlock() || !out.hasOneUse() ||
        !cast<MemRefType>(out.getType()).getLayout().isIdentity())
      return;
    auto found = reshapedAllocation(copy);
    if (!found)
      return;
    auto [alloc, reshapes] = *found;
    for (Operation *user : alloc->getUsers()) {
      if (user == copy || (!reshapes.empty() && user == reshapes.back()))
        continue;
      Operation *inBlock = copy->getBlock()->findAncestorOpInBlock(*user);
      if (!inBlock || !inBlock->isBeforeInBlock(copy))
        return;
    }
    OpBuilder b(alloc);
    Value view = undoReshapes(b, alloc.getLoc(), out, reshapes);
    if (view.getType() != alloc.getType()) {
      // Not the allocation's type after all: leave the IR as it was.
      for (Operation *op = view.getDefiningOp(); op && op != alloc;) {
        Operation *next = op->getOperand(0).getDefiningOp();
        op->erase();
        op = next;
      }
      return;
    }
    copy.erase();
    for (Operation *reshape : reshapes)
      reshape->erase();
    alloc.replaceAllUsesWith(view);
    alloc.erase();
  }
};
} // namespace
