//===- Signature.h - What a compiled Kina module exports --------*- C++ -*-===//
//
// Plain C++ (no MLIR): written into every shared object as JSON by the
// compiler (lib/Target) and read back by loaders (SharedLibrary.h). The
// library that implements it, KinaABI, links neither.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_API_SIGNATURE_H
#define KINA_API_SIGNATURE_H

#include "Kina/API/TensorTypes.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kina {

struct TensorSignature {
  std::string name; // parameter name; empty for a result
  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  /// Element count; at most kMaxElements (checked when parsed).
  int64_t numElements() const;
  /// Size in bytes of a dense buffer.
  int64_t numBytes() const { return numElements() * dtypeInfo(dtype).bytes; }
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
