//===- Compiler.h - `.kina` source to a shared object -----------*- C++ -*-===//
//
// The compiler as a library call with plain C++ types, for embedders such
// as the Python bindings.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_COMPILER_COMPILER_H
#define KINA_COMPILER_COMPILER_H

#include "Kina/AutoShard/AutoShardOptions.h"
#include "Kina/Sharding/CostRecords.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::kina {

struct CompileOutput {
  bool ok = false;
  /// Every diagnostic, `file:line:col: error: ...` with the source line.
  std::string diagnostics;
  /// The IR of each stage (empty for stages not reached; spmd without a
  /// mesh): mlir::kina::CompileArtifacts.
  std::string kinaIR, propagatedIR, hostIR, spmdIR, linalgIR, llvmIR;
  /// What the compile decided, as data: every collective the propagation
  /// inserted and every function's cost (the remarks say the same).
  CostRecords records;
  /// The plans --kina-auto-shard found (functions with `@auto` placements).
  std::vector<AutoShardReport> autoShard;
};

/// Compiles `.kina` source (named `filename` in diagnostics) to a shared
/// object at `soPath`. Thread-safe: each call has its own MLIR context.
/// `probes`: the instrumented form behind the simulator's divergence
/// report (mlir::kina::CompileOptions::probes), not the usual ABI.
/// `matmulTuning`: a tuning file for this CPU, or empty (the model's
/// parameters). `locations`: every stage's IR with each op's source
/// location (mlir::kina::CompileOptions::printLocations).
CompileOutput compileKinaSource(const std::string &text,
                                const std::string &filename,
                                const std::string &soPath,
                                bool probes = false,
                                const std::string &matmulTuning = "",
                                bool locations = false,
                                const AutoShardOptions &autoShard = {});

/// This CPU as tuning files name it (kina::cpuKey), and the matmul
/// parameters the analytic model chooses for it: what `python3 -m
/// kina.tune` starts from.
struct HostMatmulModel {
  std::string cpuKey;
  int64_t tileM = 0, tileN = 0, cacheM = 0, cacheN = 0, cacheK = 0;
};
HostMatmulModel describeHostMatmulModel();

/// Parses and type-checks only: `ok`, `diagnostics` and `kinaIR`.
CompileOutput checkKinaSource(const std::string &text,
                              const std::string &filename);

} // namespace mlir::kina

#endif // KINA_COMPILER_COMPILER_H
