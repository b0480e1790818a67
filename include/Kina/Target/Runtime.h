//===- Runtime.h - The runtime linked into every shared object --*- C++ -*-===//
#ifndef KINA_TARGET_RUNTIME_H
#define KINA_TARGET_RUNTIME_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/IR/Module.h"

namespace mlir::kina {

/// Symbols the runtime exports from every .so (besides kina_NAME wrappers
/// and kina_module_signature). A program function named like the part after
/// `kina_` would clash with them.
inline constexpr llvm::StringLiteral kRuntimeExports[] = {
    "kina_get_num_threads", "kina_set_num_threads"};

/// Links lib/Runtime (the thread pool behind `kina_parallel_for`, the
/// allocator behind `_mlir_memref_to_llvm_alloc/free`) into `module`,
/// keeping only the exports above visible.
LogicalResult linkRuntime(llvm::Module &module, Location loc);

} // namespace mlir::kina

#endif // KINA_TARGET_RUNTIME_H
