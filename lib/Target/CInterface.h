//===- CInterface.h - The C ABI wrappers of a .so ---------------*- C++ -*-===//
#ifndef KINA_LIB_TARGET_CINTERFACE_H
#define KINA_LIB_TARGET_CINTERFACE_H

#include "Kina/Signature/Signature.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/IR/Module.h"

namespace mlir::kina {

/// Adds to `module` (the lowered functions, translated to LLVM IR) the
/// exports of docs/interfaces.md: `kina_NAME` and `kina_spmd_NAME` around
/// each function of `signature`, their packed entries, and
/// `kina_module_signature()`; every lowered function becomes internal.
LogicalResult addCInterface(llvm::Module &module,
                            const ModuleSignature &signature, Location loc);

} // namespace mlir::kina

#endif // KINA_LIB_TARGET_CINTERFACE_H
