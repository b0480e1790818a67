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

#include "Kina/ABI/ABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::kina {
#define GEN_PASS_DEF_FREEAFTERLASTUSEPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// Moves `last` to the ancestor of `user` in `block` if that one is later;
/// false if `user` is not in `block`.
static bool later(Block *block, Operation *user, Operation *&last) {
  Operation *inBlock = block->findAncestorOpInBlock(*user);
  if (!inBlock)
    return false;
  if (last->isBeforeInBlock(inBlock))
    last = inBlock;
  return true;
}

/// The runtime collectives' calls that receive `address` (through integer
/// casts), or nothing if it goes anywhere else, where it might outlive them.
static std::optional<SmallVector<Operation *>>
addressUsers(memref::ExtractAlignedPointerAsIndexOp address) {
  SmallVector<Operation *> calls;
  SmallVector<Value> values = {address.getResult()};
  while (!values.empty()) {
    Value value = values.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<arith::IndexCastOp>(user))
        values.push_back(user->getResult(0));
      else if (auto call = dyn_cast<func::CallOp>(user);
               call && call.getCallee().starts_with(KINA_COLLECTIVE_PREFIX))
        calls.push_back(user);
      else
        return std::nullopt;
    }
  }
  return calls;
}

/// The last op of `block` that uses `buffer` or a view of it (directly or
/// in its regions), other than `dealloc`; nothing when a view of it leaves
/// by a way this pass cannot follow (a result that is not a view of it,
/// a terminator, its address anywhere but into calls).
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
      } else if (auto address =
                     dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        // The collectives' runtime calls take the address as an integer;
        // they use it during the call only.
        std::optional<SmallVector<Operation *>> calls = addressUsers(address);
        if (!calls)
          return std::nullopt;
        for (Operation *call : *calls)
          if (!later(block, call, last))
            return std::nullopt;
      } else if (user->hasTrait<OpTrait::IsTerminator>() ||
                 llvm::any_of(user->getResultTypes(),
                              llvm::IsaPred<BaseMemRefType>)) {
        return std::nullopt; // the terminator's parent, or an unknown alias
      }
      if (!later(block, user, last))
        return std::nullopt;
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
