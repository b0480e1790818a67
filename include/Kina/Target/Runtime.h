//===- Runtime.h - The runtime linked into every shared object --*- C++ -*-===//
#ifndef KINA_TARGET_RUNTIME_H
#define KINA_TARGET_RUNTIME_H

#include "Kina/API/ABI.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/IR/Module.h"

namespace mlir::kina {

/// Symbols every .so exports besides the kina_NAME wrappers. A program
/// function named like the part after `kina_` would clash with them.
inline constexpr llvm::StringLiteral kRuntimeExports[] = {
    KINA_SIGNATURE_SYMBOL, KINA_GET_NUM_THREADS_SYMBOL,
    KINA_SET_NUM_THREADS_SYMBOL};

/// Links lib/Runtime (the thread pool behind `kina_parallel_for`, the
/// allocator behind `_mlir_memref_to_llvm_alloc/free`) into `module`,
/// keeping only the exports above visible.
LogicalResult linkRuntime(llvm::Module &module, Location loc);

} // namespace mlir::kina

#endif // KINA_TARGET_RUNTIME_H
