//===- MatmulTuning.h - Measured matmul parameters per shape --*- C++ -*-===//
//
// The empirical refinement of the analytic model (MatmulModel.h): for a
// shape the model may serve poorly, `python3 -m kina.tune` times the
// model's parameters against nearby ones on this CPU and writes the
// fastest to a tuning file, which a compile then reads on request. A file
// belongs to the CPU it was measured on (cpuKey): any other CPU rejects it.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_CPU_MATMULTUNING_H
#define KINA_CPU_MATMULTUNING_H

#include "Kina/CPU/CPU.h"
#include "Kina/CPU/MatmulModel.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::kina {

/// The parameters a tuning file sets for one static shape (M x K x N); the
/// others (the register tile's width, streamRows) stay the model's.
struct TunedMatmul {
  int64_t m = 0, k = 0, n = 0;
  int64_t tileM = 0, cacheM = 0, cacheN = 0, cacheK = 0;
};

/// What identifies a CPU for tuning: its name, vector width and caches
/// (two hosts of one name may report different caches).
std::string cpuKey(const CPUDescription &cpu);

/// What is wrong with `t`'s parameters, if anything, naming the parameter
/// as kina-tile-matmuls' option and a tuning file's field do (`tile-m`
/// must be in [1, kMaxTileRows], the cache tiles at least 1).
std::optional<std::string> checkTunedParameters(const TunedMatmul &t);

/// `t` as kina-tile-matmuls' `tuned` option entry:
/// `MxKxN:tile-m:cache-m:cache-n:cache-k`.
std::string formatTunedMatmul(const TunedMatmul &t);

/// The inverse of formatTunedMatmul; nothing unless `text` has that form
/// with positive numbers (the parameters are not checked).
std::optional<TunedMatmul> parseTunedMatmul(llvm::StringRef text);

/// The entries of the tuning file at `path` (docs/interfaces.md shows the
/// format) for `cpu`. Errors name the file, and the line and column or
/// the entry at fault: unreadable, not JSON, another format version,
/// measured on another CPU, a missing or out-of-range field.
llvm::Expected<std::vector<TunedMatmul>>
readMatmulTuning(llvm::StringRef path, const CPUDescription &cpu);

} // namespace mlir::kina

#endif // KINA_CPU_MATMULTUNING_H
