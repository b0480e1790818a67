//===- ObjectFile.cpp - An LLVM module to a relocatable object ------------===//
#include "Kina/Target/ObjectFile.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/IR/LegacyPassManager.h"

using namespace mlir;

FailureOr<std::string> mlir::kina::emitObject(llvm::Module &module,
                                              llvm::TargetMachine &machine,
                                              Location loc) {
  SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return emitError(loc) << "the host target cannot emit object files";
  codegen.run(module);
  return std::string(buffer.begin(), buffer.end());
}

