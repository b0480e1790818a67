//===- Optimize.h - LLVM's O3 pipeline on a generated module ----*- C++ -*-===//
#ifndef KINA_TARGET_OPTIMIZE_H
#define KINA_TARGET_OPTIMIZE_H

#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace mlir::kina {

/// LLVM's O3 pipeline for `machine`, without loop unrolling, after the
/// top-level loops of long functions are split into functions of their
/// own; with `sanitizeAddress`, instrumented by AddressSanitizer (the
/// process that loads the .so must provide the ASan runtime).
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                    bool sanitizeAddress);

} // namespace mlir::kina

#endif // KINA_TARGET_OPTIMIZE_H
