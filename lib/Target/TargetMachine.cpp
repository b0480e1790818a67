//===- TargetMachine.cpp - The LLVM target code is generated for ----------===//
#include "Kina/Target/TargetMachine.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;

std::unique_ptr<llvm::TargetMachine>
mlir::kina::createTargetMachine(const mlir::kina::CPUDescription &cpu,
                                bool hostFeatures, Location loc) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // Inline asm in the generated code (x86vector's AVX2 8 x 8 transpose
  // blends with `vblendps` asm) is assembled by the target's asm parser.
  llvm::InitializeNativeTargetAsmParser();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    emitError(loc) << "no LLVM target for " << triple.str() << ": " << error;
    return nullptr;
  }
  llvm::SubtargetFeatures features;
  if (hostFeatures)
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.getKey(), feature.getValue());
  // .init_array/.fini_array, which glibc runs at dlopen/dlclose: the
  // runtime's destructors (stopping the thread pool, dropping its pthread
  // keys) must run before its code is unmapped. The default is the old
  // .ctors/.dtors, which only crtbegin.o runs, and the link has none.
  llvm::TargetOptions options;
  options.UseInitArray = true;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, cpu.name, features.getString(), options,
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}
