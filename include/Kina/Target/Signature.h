//===- Signature.h - What a compiled module exports -------------*- C++ -*-===//
//
// Read from the kina module before lowering (parameter names, dtypes,
// shapes, the entry), then rendered as the `kina_module_signature()` JSON
// and as a C header.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_TARGET_SIGNATURE_H
#define KINA_TARGET_SIGNATURE_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::kina {

struct TensorSignature {
  std::string name; // parameter name; empty for a result
  std::string dtype; // "f32", "i32" or "i64"
  std::vector<int64_t> shape;
};

struct FunctionSignature {
  std::string name;   // the exported name: `kina_<name>`
  std::string callee; // the kina function it runs
  std::vector<TensorSignature> params;
  TensorSignature result;
};

struct ModuleSignature {
  std::vector<FunctionSignature> functions;
};

/// Every function of a verified kina module, plus `main` for the `@main`
/// entry. Fails (with a diagnostic) on a function the C ABI cannot export.
FailureOr<ModuleSignature> getModuleSignature(ModuleOp module);

/// `{"functions": [{"name": ..., "params": [...], "result": {...}}]}`.
std::string renderSignatureJson(const ModuleSignature &signature);

/// A C header declaring every exported function.
std::string renderCHeader(const ModuleSignature &signature,
                          llvm::StringRef guard);

} // namespace mlir::kina

#endif // KINA_TARGET_SIGNATURE_H
