//===- OutlineLoops.h - Split long functions for LLVM -----------*- C++ -*-===//
#ifndef KINA_TARGET_OUTLINELOOPS_H
#define KINA_TARGET_OUTLINELOOPS_H

#include "llvm/IR/Module.h"

namespace mlir::kina {

/// Moves each top-level loop of a function with many of them (a model's
/// whole forward, one loop nest per small op) into a function of its own,
/// never inlined.
void outlineTopLevelLoops(llvm::Module &module);

} // namespace mlir::kina

#endif // KINA_TARGET_OUTLINELOOPS_H
