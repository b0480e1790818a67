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
    // AMD Zen 4: AVX-512 on 256-bit pipes, one 512-bit FMA per cycle;
    // AVX512_BF16 (so Zen 5 too).
    {"znver4", 512, 32, 1, 4, {32 * KiB, 8}, {1024 * KiB, 8}, true},
    // AMD Zen 5: two 512-bit FMA pipes.
    {"znver5", 512, 32, 2, 4, {48 * KiB, 12}, {1024 * KiB, 16}, true},
};

// Every CPU above starts two 256-bit FMAs per cycle: what a CPU of 512-bit
// vectors does when its virtual machine hides AVX-512 (a Zen 4 runs one
// 512-bit FMA as two 256-bit halves on its two pipes).
static constexpr int64_t kFMAUnitsAt256Bits = 2;

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

CPUDescription
mlir::kina::describeCPUWithFeatures(llvm::StringRef name,
                                    const llvm::StringMap<bool> &features) {
  CPUDescription cpu;
  cpu.name = name.str();
  const CPUDescription *known = findKnown(name);
  if (known) {
    cpu.fmaUnits = known->fmaUnits;
    cpu.fmaLatency = known->fmaLatency;
    cpu.l1d = known->l1d;
    cpu.l2 = known->l2;
  } else {
    cpu.l1d = kFallbackL1;
    cpu.l2 = kFallbackL2;
  }
  // The ISA from the features (a CPU LLVM has no name for still has them).
  if (features.lookup("avx512f")) {
    cpu.vectorBits = 512;
    cpu.vectorRegisters = 32;
    cpu.bf16DotProduct =
        known && known->bf16DotProduct && features.lookup("avx512bf16");
  } else if (features.lookup("avx2") && features.lookup("fma")) {
    cpu.vectorBits = 256;
    if (known && known->vectorBits > cpu.vectorBits)
      cpu.fmaUnits = kFMAUnitsAt256Bits;
  }
  return cpu;
}

CPUDescription mlir::kina::hostCPU() {
  CPUDescription host = describeCPUWithFeatures(
      llvm::sys::getHostCPUName(), llvm::sys::getHostCPUFeatures());
  host.l1d = reportedCache(_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_ASSOC,
                           _SC_LEVEL1_DCACHE_LINESIZE)
                 .value_or(host.l1d);
  host.l2 = reportedCache(_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_ASSOC,
                          _SC_LEVEL2_CACHE_LINESIZE)
                .value_or(host.l2);
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
