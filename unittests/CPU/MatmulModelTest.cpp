//===- MatmulModelTest.cpp - Matmul parameters for a table of CPUs --------===//

#include "Kina/CPU/MatmulModel.h"

#include "gtest/gtest.h"

using namespace mlir::kina;

namespace {

struct Expected {
  const char *cpu;
  int64_t tileM, tileN, cacheK, cacheM, cacheN;
};

// Derived by hand from each CPU's figures in lib/CPU/CPU.cpp: a change to
// the model or to the table shows up here as a diff to explain.
const Expected kExpected[] = {
    // AVX2, FMA latency 5: 6 rows fill the 16 ymm registers; one L1 way
    // for A's 6 x 170 micro-panel; L2 256 KiB: 3 ways of 32 KiB for each
    // block, so at most 3 x 8 rows of A a page apart.
    {"haswell", 6, 16, 170, 24, 144},
    // AVX-512, two 512-bit FMAs of latency 4: 16 accumulators (8 x 2);
    // L1 32 KiB 8-way: one way for A, K = 128.
    {"skylake-avx512", 8, 32, 128, 112, 896},
    // AVX2 only, but a 48 KiB 12-way L1: three ways for A, K = 512.
    {"alderlake", 6, 16, 512, 128, 256},
    {"znver3", 6, 16, 170, 48, 289},
    // One 512-bit FMA per cycle: 8 accumulators are enough, 4 x 32; A's
    // micro-panel then needs under one of L1's 8 ways, B's strip (six
    // ways) bounds K.
    {"znver4", 4, 32, 192, 96, 512},
    {"znver5", 8, 32, 256, 112, 448},
};

class KnownCPU : public ::testing::TestWithParam<Expected> {};

TEST_P(KnownCPU, ParametersFromItsFigures) {
  const Expected &want = GetParam();
  std::optional<CPUDescription> cpu = describeCPU(want.cpu);
  ASSERT_TRUE(cpu.has_value()) << want.cpu;
  MatmulParameters got = chooseMatmulParameters(*cpu);
  EXPECT_EQ(got.tileM, want.tileM);
  EXPECT_EQ(got.tileN, want.tileN);
  EXPECT_EQ(got.cacheK, want.cacheK);
  EXPECT_EQ(got.cacheM, want.cacheM);
  EXPECT_EQ(got.cacheN, want.cacheN);
  // Decode-step shapes (one register tile of rows) skip packing B.
  EXPECT_EQ(got.streamRows, want.tileM);
  // Addresses one way of L1 apart share a set: 4 KiB on every known CPU
  // (48 KiB 12-way, 32 KiB 8-way).
  EXPECT_EQ(got.l1WayBytes, 4096) << want.cpu;
}

INSTANTIATE_TEST_SUITE_P(Table, KnownCPU, ::testing::ValuesIn(kExpected),
                         [](const ::testing::TestParamInfo<Expected> &info) {
                           std::string name = info.param.cpu;
                           for (char &c : name)
                             if (!isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return name;
                         });

/// What every choice must satisfy, whatever the CPU: the register tile fits
/// the registers (accumulators, B's vectors, one broadcast), B's strip fits
/// L1 with room for A's rows, both blocks fit L2.
void expectFits(const CPUDescription &cpu) {
  MatmulParameters p = chooseMatmulParameters(cpu);
  int64_t vectors = p.tileN / cpu.floatLanes();
  EXPECT_EQ(p.tileN % cpu.floatLanes(), 0) << cpu.name;
  EXPECT_LE(p.tileM * vectors + vectors + 1, cpu.vectorRegisters) << cpu.name;
  EXPECT_GE(p.tileM * vectors, cpu.fmaUnits * cpu.fmaLatency) << cpu.name;
  EXPECT_LT((p.tileM + p.tileN) * p.cacheK * 4, cpu.l1d.bytes) << cpu.name;
  EXPECT_LT((p.cacheM + p.cacheN) * p.cacheK * 4, cpu.l2.bytes) << cpu.name;
}

TEST(MatmulModel, EveryKnownCPUFits) {
  ASSERT_EQ(knownCPUs().size(), std::size(kExpected));
  for (const CPUDescription &cpu : knownCPUs())
    expectFits(cpu);
}

TEST(MatmulModel, HostFits) {
  CPUDescription host = hostCPU();
  EXPECT_FALSE(host.name.empty());
  EXPECT_TRUE(host.vectorBits == 128 || host.vectorBits == 256 ||
              host.vectorBits == 512);
  EXPECT_GT(host.l1d.sets(), 0);
  EXPECT_GT(host.l2.sets(), 0);
  expectFits(host);
}

TEST(MatmulModel, AVX512HiddenByAVirtualMachine) {
  // A Zen 4 whose virtual machine reports AVX2 and FMA but no AVX-512:
  // 256-bit vectors and 16 registers, and its two 256-bit FMA pipes (not
  // the one 512-bit FMA per cycle of the table), so 6 x 16 tiles as on a
  // Zen 3, not 4 x 16.
  llvm::StringMap<bool> features;
  features["avx2"] = true;
  features["fma"] = true;
  features["avx512f"] = false;
  CPUDescription cpu = describeCPUWithFeatures("znver4", features);
  EXPECT_EQ(cpu.vectorBits, 256);
  EXPECT_EQ(cpu.vectorRegisters, 16);
  EXPECT_EQ(cpu.fmaUnits, 2);
  MatmulParameters p = chooseMatmulParameters(cpu);
  EXPECT_EQ(p.tileM, 6);
  EXPECT_EQ(p.tileN, 16);
  expectFits(cpu);
  // With AVX-512 shown, the table's figures.
  features["avx512f"] = true;
  EXPECT_EQ(chooseMatmulParameters(describeCPUWithFeatures("znver4", features))
                .tileM,
            4);
}

TEST(MatmulModel, BF16KernelWhereTheDotDoublesTheFMAs) {
  // vdpbf16ps pays on Zen 4 and Zen 5, with AVX512_BF16 shown; not on a
  // CPU the table does not know (an Intel Xeon), nor with AVX-512 hidden.
  llvm::StringMap<bool> features;
  features["avx2"] = features["fma"] = features["avx512f"] = true;
  features["avx512bf16"] = true;
  EXPECT_TRUE(describeCPUWithFeatures("znver4", features).bf16DotProduct);
  EXPECT_TRUE(describeCPUWithFeatures("znver5", features).bf16DotProduct);
  EXPECT_FALSE(
      describeCPUWithFeatures("sapphirerapids", features).bf16DotProduct);
  EXPECT_TRUE(describeCPU("znver4")->bf16DotProduct);
  EXPECT_FALSE(describeCPU("skylake-avx512")->bf16DotProduct);
  features["avx512bf16"] = false;
  EXPECT_FALSE(describeCPUWithFeatures("znver4", features).bf16DotProduct);
  features["avx512f"] = false;
  features["avx512bf16"] = true;
  EXPECT_FALSE(describeCPUWithFeatures("znver4", features).bf16DotProduct);
}

TEST(MatmulModel, SSEOnlyCPU) {
  // No AVX: 4-lane vectors, 16 registers.
  CPUDescription sse{"x86-64", 128, 16, 2, 4, {32 * 1024, 8}, {256 * 1024, 4}};
  MatmulParameters p = chooseMatmulParameters(sse);
  EXPECT_EQ(p.tileN, 8);
  EXPECT_EQ(p.tileM, 6);
  expectFits(sse);
}

TEST(MatmulModel, UnknownNames) {
  EXPECT_FALSE(describeCPU("pentium-pro-max").has_value());
  EXPECT_TRUE(describeCPU("host").has_value());
  EXPECT_NE(describableCPUNames().find("znver5"), std::string::npos);
}

} // namespace
