//===- Compiler.h - `.kina` source to a shared object -----------*- C++ -*-===//
//
// The compiler as a library call with plain C++ types, for embedders such
// as the Python bindings.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_API_COMPILER_H
#define KINA_API_COMPILER_H

#include <string>

namespace kina {

struct CompileOutput {
  bool ok = false;
  /// Every diagnostic, `file:line:col: error: ...` with the source line.
  std::string diagnostics;
  /// The IR of each stage (empty for stages not reached).
  std::string kinaIR, linalgIR, llvmIR;
};

/// Compiles `.kina` source (named `filename` in diagnostics) to a shared
/// object at `soPath`. Thread-safe: each call has its own MLIR context.
/// `probes`: the instrumented form behind the simulator's divergence
/// report (mlir::kina::CompileOptions::probes), not the usual ABI.
/// `matmulTuning`: a tuning file for this CPU, or empty (the model's
/// parameters).
CompileOutput compileKinaSource(const std::string &text,
                                const std::string &filename,
                                const std::string &soPath,
                                bool probes = false,
                                const std::string &matmulTuning = "");

/// Parses and type-checks only: `ok`, `diagnostics` and `kinaIR`.
CompileOutput checkKinaSource(const std::string &text,
                              const std::string &filename);

} // namespace kina

#endif // KINA_API_COMPILER_H
