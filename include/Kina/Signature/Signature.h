//===- Signature.h - What a compiled Kina module exports --------*- C++ -*-===//
//
// Plain C++ (no MLIR): read from the kina module by the compiler
// (Kina/Pipelines/ExportedForms.h), written into every shared object as
// JSON (lib/Target) and read back by loaders (SharedLibrary.h). The
// library that implements it, KinaSignature, links neither.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_SIGNATURE_SIGNATURE_H
#define KINA_SIGNATURE_SIGNATURE_H

#include "Kina/ABI/TensorTypes.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::kina {

/// Where a per-device tensor's block lies in its global tensor.
struct Placement {
  std::string text;              // as the IR prints it: `@sharded(axis=1)`
  std::vector<int64_t> shape;    // the global shape
  std::vector<int> splitOver;    // per dim: the mesh axis cutting it, or -1
  std::vector<int> partialOver;  // mesh axes it is a summand over
};

struct TensorSignature {
  std::string name; // parameter name; empty for a result
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Per-device functions only: the global tensor this is a block of.
  std::optional<Placement> placement;
  /// A result only: the parameter whose buffer receives it (`@reuses(p)`,
  /// a donated argument); it has no output pointer of its own.
  std::optional<size_t> reuses;

  /// Element count; at most kMaxElements (checked when parsed).
  int64_t numElements() const;
  /// Size in bytes of a dense buffer.
  int64_t numBytes() const { return numElements() * dtypeInfo(dtype).bytes; }
};

/// A value of the program a function also returns, after its result, when
/// compiled with probes (the simulator's divergence report).
struct Probe {
  std::string op;       // `kina.matmul`
  std::string location; // `file:line:col`
  std::string name;     // the source name bound to it (`h`), or empty
  TensorSignature tensor;
};

struct FunctionSignature {
  std::string name;   // exported as `kina_<name>`
  std::string callee; // the kina function it runs
  std::vector<TensorSignature> params;
  /// One or more, each with an output pointer after the inputs, in order,
  /// but for those that reuse a parameter's buffer.
  std::vector<TensorSignature> results;
  /// Each has one more output pointer after the results', in order.
  std::vector<Probe> probes;

  /// Output pointers a call takes after the inputs: results (but those
  /// that reuse a parameter), then probes.
  size_t numOutputs() const;
  /// Whether parameter `param` receives a result.
  bool isDonated(size_t param) const;
};

struct MeshAxis {
  std::string name;
  int64_t size;
};

struct ModuleSignature {
  std::vector<FunctionSignature> functions;
  /// A program with a mesh: its axes (devices numbered row-major), and the
  /// per-device form of each mesh-placed function, exported as
  /// KINA_SPMD_PREFIX NAME with the device first (ABI.h).
  std::vector<MeshAxis> mesh;
  std::vector<FunctionSignature> devices;

  int64_t numDevices() const;
};

/// `{"functions": [{"name": ..., "params": [...], "results": [{...}, ...],
///   "result": {...}}], "mesh": [{"name": "x", "size": 2}], "devices":
/// [...]}` (`"result"` only for a function with one result); a device
/// function's tensors add `"global": {"placement", "shape", "split",
/// "partial"}`.
std::string renderSignatureJson(const ModuleSignature &signature);

/// Parses what renderSignatureJson wrote; nullopt (and `error`) otherwise.
std::optional<ModuleSignature> parseSignatureJson(const std::string &json,
                                                  std::string &error);

/// Symbols every .so exports besides the kina_NAME wrappers. A program
/// function named like the part after `kina_` would clash with them.
inline constexpr const char *kRuntimeExports[] = {
    KINA_SIGNATURE_SYMBOL, KINA_GET_NUM_THREADS_SYMBOL,
    KINA_SET_NUM_THREADS_SYMBOL};

/// The symbol of the packed entry of `name`: `int32_t (void **args)` with
/// args = inputs..., outputs... (one per result). `.` keeps it apart from every `kina_<name>`.
inline std::string packedEntrySymbol(const std::string &name) {
  return "kina.packed." + name;
}

/// The packed entry of the per-device form of `name`: `int32_t (void
/// **args)` with args = the struct kina_device, inputs..., outputs....
inline std::string packedDeviceEntrySymbol(const std::string &name) {
  return "kina.packed.spmd." + name;
}

} // namespace mlir::kina

#endif // KINA_SIGNATURE_SIGNATURE_H
