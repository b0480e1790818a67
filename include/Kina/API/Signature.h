//===- Signature.h - What a compiled Kina module exports --------*- C++ -*-===//
//
// Plain C++ (no MLIR): shared by the compiler, which writes it into every
// shared object as JSON, and by the runtime, which reads it back.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_API_SIGNATURE_H
#define KINA_API_SIGNATURE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kina {

struct TensorSignature {
  std::string name;  // parameter name; empty for a result
  std::string dtype; // "f32", "i32" or "i64"
  std::vector<int64_t> shape;

  /// Element count; the compiler guarantees it fits in 60 bits.
  int64_t numElements() const;
};

struct FunctionSignature {
  std::string name;   // exported as `kina_<name>`
  std::string callee; // the kina function it runs
  std::vector<TensorSignature> params;
  TensorSignature result;
};

struct ModuleSignature {
  std::vector<FunctionSignature> functions;
};

/// `{"functions": [{"name": ..., "params": [...], "result": {...}}]}`.
std::string renderSignatureJson(const ModuleSignature &signature);

/// Parses what renderSignatureJson wrote; nullopt (and `error`) otherwise.
std::optional<ModuleSignature> parseSignatureJson(const std::string &json,
                                                  std::string &error);

/// The symbol of the packed entry of `name`: `int32_t (void **args)` with
/// args = inputs..., out. `.` keeps it apart from every `kina_<name>`.
inline std::string packedEntrySymbol(const std::string &name) {
  return "kina.packed." + name;
}

} // namespace kina

#endif // KINA_API_SIGNATURE_H
