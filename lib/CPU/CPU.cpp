//===- CPU.cpp - The host CPU and the CPUs Kina knows by name -------------===//

#include "Kina/CPU/CPU.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <unistd.h>

using namespace mlir::kina;

static constexpr int64_t KiB = 1024;

// Vendors' figures: vector ISA, FMA pipes at that width and their latency,
// L1 data and L2 (per core) size and associativity.
static const CPUDescription kKnownCPUs[] = {
    // Intel Haswell: AVX2, two 256-bit FMA pipes, 5 cycles.
    {"haswell", 256, 16, 2, 5, {32 * KiB, 8}, {256 * KiB, 8}},
    // Intel Skylake-X / Skylake-SP with two 512-bit FMA pipes.
    {"skylake-avx512", 512, 32, 2, 4, {32 * KiB, 8}, {1024 * KiB, 16}},
    // Intel Alder Lake, performance core: AVX2 only.
    {"alderlake", 256, 16, 2, 4, {48 * KiB, 12}, {1280 * KiB, 10}},
    // AMD Zen 3: AVX2.
    {"znver3", 256, 16, 2, 4, {32 * KiB, 8}, {512 * KiB, 8}},
    // AMD Zen 4: AVX-512 on 256-bit pipes, one 512-bit FMA per cycle.
    {"znver4", 512, 32, 1, 4, {32 * KiB, 8}, {1024 * KiB, 8}},
    // AMD Zen 5: two 512-bit FMA pipes.
    {"znver5", 512, 32, 2, 4, {48 * KiB, 12}, {1024 * KiB, 16}},
};

// For a host that is none of the above.
static constexpr CacheLevel kFallbackL1{32 * KiB, 8};
static constexpr CacheLevel kFallbackL2{512 * KiB, 8};

llvm::ArrayRef<CPUDescription> mlir::kina::knownCPUs() { return kKnownCPUs; }

static const CPUDescription *findKnown(llvm::StringRef name) {
  const CPUDescription *found = llvm::find_if(
      kKnownCPUs, [&](const CPUDescription &cpu) { return cpu.name == name; });
  return found == std::end(kKnownCPUs) ? nullptr : found;
}

/// A cache level as the C library reports it (from CPUID), if it reports
/// a size, an associativity and a line size that make whole sets.
static std::optional<CacheLevel> reportedCache(int sizeName, int waysName,
                                               int lineName) {
  CacheLevel level{sysconf(sizeName), sysconf(waysName), sysconf(lineName)};
  if (level.bytes <= 0 || level.ways <= 0 || level.lineBytes <= 0 ||
      level.bytes % (level.ways * level.lineBytes))
    return std::nullopt;
  return level;
}

CPUDescription mlir::kina::hostCPU() {
  CPUDescription host;
  host.name = llvm::sys::getHostCPUName().str();
  const CPUDescription *known = findKnown(host.name);
  if (known) {
    host.fmaUnits = known->fmaUnits;
    host.fmaLatency = known->fmaLatency;
  }
  // The ISA from the features (a CPU LLVM has no name for still has them).
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f")) {
    host.vectorBits = 512;
    host.vectorRegisters = 32;
  } else if (features.lookup("avx2") && features.lookup("fma")) {
    host.vectorBits = 256;
  }
  host.l1d = reportedCache(_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_ASSOC,
                           _SC_LEVEL1_DCACHE_LINESIZE)
                 .value_or(known ? known->l1d : kFallbackL1);
  host.l2 = reportedCache(_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_ASSOC,
                          _SC_LEVEL2_CACHE_LINESIZE)
                .value_or(known ? known->l2 : kFallbackL2);
  return host;
}

std::optional<CPUDescription> mlir::kina::describeCPU(llvm::StringRef name) {
  if (name == "host")
    return hostCPU();
  if (const CPUDescription *known = findKnown(name))
    return *known;
  return std::nullopt;
}

std::string mlir::kina::describableCPUNames() {
  std::string names = "host";
  for (const CPUDescription &cpu : kKnownCPUs)
    names += ", " + cpu.name;
  return names;
}
