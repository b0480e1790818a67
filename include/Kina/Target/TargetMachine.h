//===- TargetMachine.h - The LLVM target code is generated for --*- C++ -*-===//
#ifndef KINA_TARGET_TARGETMACHINE_H
#define KINA_TARGET_TARGETMACHINE_H

#include "Kina/CPU/CPU.h"

#include "mlir/IR/Location.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>

namespace mlir::kina {

/// A target machine for `cpu`, at -O3, position-independent: with the
/// features of the CPU this process runs on when `hostFeatures`, else
/// those LLVM gives the named CPU. Null (and an error at `loc`) when LLVM
/// has no target for this process's triple.
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const CPUDescription &cpu, bool hostFeatures, Location loc);

} // namespace mlir::kina

#endif // KINA_TARGET_TARGETMACHINE_H
