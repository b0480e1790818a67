//===- BFloat16Memory.cpp - BF16 loads and stores as i16 ------------------===//
//
// A copy's `load bfloat` then `store bfloat` becomes `load i16`, `store
// i16`; a load used otherwise gets a bitcast back to bfloat (Kina's BF16
// arithmetic bitcasts to i16 at once, and InstCombine folds the pair). A
// stored value that is not a bitcast of an i16 is bitcast to one.
//
//===----------------------------------------------------------------------===//

#include "BFloat16Memory.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"

using namespace llvm;

namespace {

bool isBFloat16(Type *type) { return type->getScalarType()->isBFloatTy(); }

/// `type` with i16 for its bfloat scalar.
Type *asInteger(Type *type) {
  Type *i16 = Type::getInt16Ty(type->getContext());
  if (auto *vector = dyn_cast<VectorType>(type))
    return VectorType::get(i16, vector->getElementCount());
  return i16;
}

void rewriteLoad(LoadInst *load) {
  IRBuilder<> b(load);
  LoadInst *bits = b.CreateAlignedLoad(asInteger(load->getType()),
                                       load->getPointerOperand(),
                                       load->getAlign(), load->isVolatile());
  bits->copyMetadata(*load);
  load->replaceAllUsesWith(b.CreateBitCast(bits, load->getType()));
  load->eraseFromParent();
}

void rewriteStore(StoreInst *store) {
  IRBuilder<> b(store);
  Value *value = store->getValueOperand();
  Value *bits = nullptr;
  if (auto *cast = dyn_cast<BitCastInst>(value))
    if (cast->getOperand(0)->getType() == asInteger(value->getType()))
      bits = cast->getOperand(0);
  if (!bits)
    bits = b.CreateBitCast(value, asInteger(value->getType()));
  StoreInst *stored = b.CreateAlignedStore(bits, store->getPointerOperand(),
                                           store->getAlign(),
                                           store->isVolatile());
  stored->copyMetadata(*store);
  store->eraseFromParent();
}

} // namespace

void mlir::kina::moveBFloat16AsIntegers(Module &module) {
  SmallVector<LoadInst *> loads;
  SmallVector<StoreInst *> stores;
  for (Function &fn : module)
    for (Instruction &inst : instructions(fn)) {
      if (auto *load = dyn_cast<LoadInst>(&inst);
          load && !load->isAtomic() && isBFloat16(load->getType()))
        loads.push_back(load);
      if (auto *store = dyn_cast<StoreInst>(&inst);
          store && !store->isAtomic() &&
          isBFloat16(store->getValueOperand()->getType()))
        stores.push_back(store);
    }
  // Loads first, so that a copy's store finds the bitcast of an i16.
  for (LoadInst *load : loads)
    rewriteLoad(load);
  for (StoreInst *store : stores)
    rewriteStore(store);
}
