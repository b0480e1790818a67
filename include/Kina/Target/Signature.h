//===- Signature.h - Reading the exported signature from kina IR -*- C++ -*-===//
//
// Read from the kina module before lowering (parameter names, dtypes,
// shapes, the entry), then rendered as JSON (Kina/API/Signature.h) and as
// a C header.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_TARGET_SIGNATURE_H
#define KINA_TARGET_SIGNATURE_H

#include "Kina/API/Signature.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::kina {

/// Every function of a verified kina module, plus `main` for the `@main`
/// entry. Fails (with a diagnostic) on a function the C ABI cannot export.
FailureOr<::kina::ModuleSignature> getModuleSignature(ModuleOp module);

/// A C header declaring every exported function.
std::string renderCHeader(const ::kina::ModuleSignature &signature,
                          llvm::StringRef guard);

} // namespace mlir::kina

#endif // KINA_TARGET_SIGNATURE_H
