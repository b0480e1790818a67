//===- MergeParallelBodies.cpp - One copy of identical loop bodies --------===//
//
// A model's repeated blocks outline one parallel body per op per block;
// blocks of equal shapes give bodies that differ only in their names.
// Grouped by type and by a cheap fingerprint (the op names in order), then
// compared region by region.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::kina {
#define GEN_PASS_DEF_MERGEPARALLELBODIESPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// The op names of `fn`'s body in order, hashed.
static llvm::hash_code fingerprint(func::FuncOp fn) {
  llvm::hash_code hash = llvm::hash_value(fn.getFunctionType().getAsOpaquePointer());
  fn.walk([&](Operation *op) {
    hash = llvm::hash_combine(hash, op->getName().getAsOpaquePointer(),
                              op->getNumOperands(), op->getNumRegions());
  });
  return hash;
}

namespace {
struct MergeParallelBodiesPass
    : mlir::kina::impl::MergeParallelBodiesPassBase<MergeParallelBodiesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    mlir::kina::KinaDialect::ParallelBodyAttrHelper parallelBody(&getContext());
    llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp>> kept;
    llvm::DenseMap<StringAttr, StringAttr> replacedBy;
    SmallVector<func::FuncOp> duplicates;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!parallelBody.isAttrPresent(fn) || fn.isExternal())
        continue;
      SmallVector<func::FuncOp> &candidates = kept[fingerprint(fn)];
      auto same = llvm::find_if(candidates, [&](func::FuncOp other) {
        return other.getFunctionType() == fn.getFunctionType() &&
               OperationEquivalence::isRegionEquivalentTo(
                   &other.getBody(), &fn.getBody(),
                   OperationEquivalence::IgnoreLocations);
      });
      if (same == candidates.end()) {
        candidates.push_back(fn);
        continue;
      }
      replacedBy[fn.getSymNameAttr()] = same->getSymNameAttr();
      duplicates.push_back(fn);
    }
    if (duplicates.empty())
      return;
    module.walk([&](func::CallOp call) {
      if (StringAttr to = replacedBy.lookup(call.getCalleeAttr().getAttr()))
        call.setCalleeAttr(FlatSymbolRefAttr::get(to));
    });
    for (func::FuncOp fn : duplicates)
      fn.erase();
  }
};
} // namespace
