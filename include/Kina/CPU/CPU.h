//===- CPU.h - What the code generator needs to know of a CPU ---*- C++ -*-===//
//
// The few facts of an x86 CPU that Kina's kernel parameters derive from:
// its widest FMA vector, its vector registers, its FMA throughput and
// latency, and its data caches. Plain C++ over LLVM Support; no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_CPU_CPU_H
#define KINA_CPU_CPU_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::kina {

/// The data cache line of every x86 CPU Kina generates code for.
inline constexpr int64_t kCacheLineBytes = 64;

struct CacheLevel {
  int64_t bytes = 0;
  int64_t ways = 0;
  int64_t lineBytes = kCacheLineBytes;

  int64_t sets() const { return bytes / (ways * lineBytes); }
};

struct CPUDescription {
  /// LLVM's name for the CPU (`znver5`, `skylake-avx512`, ...): what code
  /// is generated for.
  std::string name;
  /// The widest vectors with FMA: 512 (AVX-512), 256 (AVX2 + FMA) or 128.
  int64_t vectorBits = 128;
  /// Architectural vector registers at that width: 32 with AVX-512, else 16.
  int64_t vectorRegisters = 16;
  /// FMA instructions of `vectorBits` started per cycle, and their latency.
  int64_t fmaUnits = 2;
  int64_t fmaLatency = 4;
  CacheLevel l1d, l2;
  /// BF16 products on AVX512_BF16's vdpbf16ps: a known CPU on which the
  /// instruction doubles the FMAs' multiply-adds per cycle (AMD Zen 4 and
  /// Zen 5), with the feature present. On a Xeon with AVX512_BF16 it
  /// ran at 0.46x the FMAs' flops (docs/performance.md), and widening to
  /// F32 for the FMA kernel is faster.
  bool bf16DotProduct = false;

  int64_t floatLanes() const { return vectorBits / 32; }
};

/// The CPUs Kina knows by name (their caches as their vendors publish
/// them), in the table's order: `haswell`, `skylake-avx512`, `alderlake`,
/// `znver3`, `znver4`, `znver5`.
llvm::ArrayRef<CPUDescription> knownCPUs();

/// The CPU this process runs on: LLVM's host name and features, the data
/// caches the C library reports (CPUID), FMA figures from the known CPU of
/// the same name where there is one.
CPUDescription hostCPU();

/// The CPU LLVM calls `name` with the ISA `features` give (a virtual
/// machine may hide AVX-512 from a CPU that has it): FMA figures and caches
/// from the known CPU of that name where there is one.
CPUDescription describeCPUWithFeatures(llvm::StringRef name,
                                       const llvm::StringMap<bool> &features);

/// `host` or a known CPU's name; nothing for other names.
std::optional<CPUDescription> describeCPU(llvm::StringRef name);

/// The names describeCPU accepts, for error messages.
std::string describableCPUNames();

} // namespace mlir::kina

#endif // KINA_CPU_CPU_H
