//===- LLVMIR.h - A lowered module to LLVM IR with its C ABI ----*- C++ -*-===//
#ifndef KINA_TARGET_LLVMIR_H
#define KINA_TARGET_LLVMIR_H

#include "Kina/Signature/Signature.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>

namespace mlir::kina {

/// Translates `lowered` (the LLVM dialect, as Kina's pipelines leave it)
/// to LLVM IR for `machine`, with the C ABI wrappers of every function of
/// `signature` and Kina's runtime linked in. Null (and a located error) on
/// failure.
std::unique_ptr<llvm::Module>
translateToLLVMIR(ModuleOp lowered, const ModuleSignature &signature,
                  llvm::TargetMachine &machine, llvm::LLVMContext &context);

} // namespace mlir::kina

#endif // KINA_TARGET_LLVMIR_H
