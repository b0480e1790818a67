//===- RuntimeLinking.h - The runtime linked into every .so -----*- C++ -*-===//
#ifndef KINA_LIB_TARGET_RUNTIMELINKING_H
#define KINA_LIB_TARGET_RUNTIMELINKING_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/IR/Module.h"

namespace mlir::kina {

/// Links lib/Runtime (the thread pool behind `kina_parallel_for`, the
/// allocator behind `_mlir_memref_to_llvm_alloc/free`, the collectives)
/// into `module`, keeping only its exports (mlir::kina::kRuntimeExports)
/// visible.
LogicalResult linkRuntime(llvm::Module &module, Location loc);

} // namespace mlir::kina

#endif // KINA_LIB_TARGET_RUNTIMELINKING_H
