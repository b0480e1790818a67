//===- ObjectFile.h - An LLVM module to a relocatable object ----*- C++ -*-===//
#ifndef KINA_TARGET_OBJECTFILE_H
#define KINA_TARGET_OBJECTFILE_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <string>

namespace mlir::kina {

/// The relocatable object `machine` generates for `module`, in memory.
FailureOr<std::string> emitObject(llvm::Module &module,
                                  llvm::TargetMachine &machine, Location loc);

} // namespace mlir::kina

#endif // KINA_TARGET_OBJECTFILE_H
