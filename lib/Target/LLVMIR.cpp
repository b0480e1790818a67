//===- LLVMIR.cpp - A lowered module to LLVM IR with its C ABI ------------===//
#include "Kina/Target/LLVMIR.h"

#include "CInterface.h"
#include "RuntimeLinking.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Verifier.h"

using namespace mlir;

std::unique_ptr<llvm::Module> mlir::kina::translateToLLVMIR(
    ModuleOp lowered, const mlir::kina::ModuleSignature &signature,
    llvm::TargetMachine &machine, llvm::LLVMContext &context) {
  Location loc = lowered.getLoc();
  registerBuiltinDialectTranslation(*lowered.getContext());
  registerLLVMDialectTranslation(*lowered.getContext());
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(lowered, context, "kina");
  if (!module) {
    emitError(loc) << "translation to LLVM IR failed";
    return nullptr;
  }
  module->setDataLayout(machine.createDataLayout());
  module->setTargetTriple(machine.getTargetTriple());
  if (failed(addCInterface(*module, signature, loc)) ||
      failed(linkRuntime(*module, loc)))
    return nullptr;
  if (llvm::verifyModule(*module, &llvm::errs())) {
    emitError(loc) << "internal error: invalid LLVM IR";
    return nullptr;
  }
  return module;
}
