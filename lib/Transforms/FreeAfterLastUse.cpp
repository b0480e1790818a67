//===- FreeAfterLastUse.cpp - Free each temporary after its last use ------===//
//
// Upstream's ownership-based deallocation frees every buffer at the end of
// the block that allocates it: a model's forward then holds all of its
// temporaries at once (353 for the 12-layer GPT, hundreds of MB), each one
// fresh memory that its first stores miss in cache, and more blocks than
// lib/Runtime/Workspace.c keeps, so the rest are faulted in and zeroed by
// the kernel on every call. This pass moves each `memref.dealloc` of a
// `memref.alloc` of the same block up to just after the last op of that
// block that uses the buffer or a view of it, so that the next temporary
// reuses a block that is still in cache.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::kina {
#define GEN_PASS_DEF_FREEAFTERLASTUSEPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// The last op of `block` that uses `buffer` or a view of it (directly or
/// in its regions), other than `dealloc`; nothing when a view of it leaves
/// by a way this pass cannot follow (a result that is not a view of it,
/// a terminator, its address as an integer).
static std::optional<Operation *> lastUse(Value buffer, Block *block,
                                          Operation *dealloc) {
  SmallVector<Value> aliases = {buffer};
  Operation *last = buffer.getDefiningOp();
  while (!aliases.empty()) {
    Value alias = aliases.pop_back_val();
    for (Operation *user : alias.getUsers()) {
      if (user == dealloc)
        continue;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == alias) {
        aliases.append(user->result_begin(), user->result_end());
      } else if (user->hasTrait<OpTrait::IsTerminator>() ||
                 isa<memref::ExtractAlignedPointerAsIndexOp>(user) ||
                 llvm::any_of(user->getResultTypes(),
                              llvm::IsaPred<BaseMemRefType>)) {
        // Left by a way not followed here: the terminator's parent, or an
        // address (the collectives' runtime calls take integers).
        return std::nullopt;
      }
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock)
        return std::nullopt;
      if (last->isBeforeInBlock(inBlock))
        last = inBlock;
    }
  }
  return last;
}

namespace {
struct FreeAfterLastUsePass
    : mlir::kina::impl::FreeAfterLastUsePassBase<FreeAfterLastUsePass> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation()->walk(
        [&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    for (memref::DeallocOp dealloc : deallocs) {
      Value buffer = dealloc.getMemref();
      auto alloc = buffer.getDefiningOp<memref::AllocOp>();
      Block *block = dealloc->getBlock();
      if (!alloc || alloc->getBlock() != block)
        continue;
      std::optional<Operation *> last = lastUse(buffer, block, dealloc);
      if (last && (*last)->isBeforeInBlock(dealloc))
        dealloc->moveAfter(*last);
    }
  }
};
} // namespace
