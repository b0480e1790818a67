//===- MatmulModel.cpp - Matmul kernel parameters from the CPU ------------===//
//
// BLIS's analytic model (Low et al., TOMS 2016), for Kina's kernel: a
// register tile of tileM broadcast elements of A times two vectors of B,
// one packed K x tileN strip of B kept in L1 while the register tiles of
// an M block stream A's rows past it, and A's block and B's packed block
// sharing L2.
//
//===----------------------------------------------------------------------===//

#include "Kina/CPU/MatmulModel.h"

#include <algorithm>

using namespace mlir::kina;

static constexpr int64_t kFloatBytes = 4;
static constexpr int64_t kPageBytes = 4096;
// Columns of the register tile, in vectors: B's two loads per step of K
// feed 2 x tileM FMAs.
static constexpr int64_t kTileVectors = 2;
// Accumulators: twice the FMAs in flight (units x latency), so that the
// next step's loads and broadcasts overlap this step's FMAs. On Zen 5
// (16 in flight) 8 x 32 measured 1-6% faster than 12 x 32 and 14 x 32.
static constexpr int64_t kAccumulatorsPerFMAInFlight = 2;

MatmulParameters mlir::kina::chooseMatmulParameters(const CPUDescription &cpu) {
  MatmulParameters p;
  p.tileN = kTileVectors * cpu.floatLanes();
  // Registers: the accumulators, B's vectors, one broadcast of A.
  int64_t rowsThatFit = (cpu.vectorRegisters - kTileVectors - 1) / kTileVectors;
  int64_t accumulators =
      kAccumulatorsPerFMAInFlight * cpu.fmaUnits * cpu.fmaLatency;
  int64_t rowsWanted = (accumulators + kTileVectors - 1) / kTileVectors;
  p.tileM =
      std::clamp<int64_t>(std::min(rowsWanted, rowsThatFit), 1, kMaxTileRows);

  // L1 (one way for C and the rest): A's tileM x K micro-panel takes the
  // ways left to it by B's strip, tileN / tileM times larger; where that
  // leaves A under a way, B's strip is what bounds K.
  int64_t spareWays = cpu.l1d.ways - 1;
  int64_t aWays =
      std::max<int64_t>(1, spareWays * p.tileM / (p.tileM + p.tileN));
  int64_t wayBytes = cpu.l1d.sets() * cpu.l1d.lineBytes;
  p.cacheK = std::min(aWays * wayBytes / (p.tileM * kFloatBytes),
                      (spareWays - aWays) * wayBytes / (p.tileN * kFloatBytes));

  // L2: A's cacheM x cacheK block and B's cacheK x cacheN packed block,
  // half of the ways each, one way left for C's tiles. B is packed, so its
  // block is bounded by size. A is read in place: its rows may be a
  // multiple of a page apart (K = 1024, 2048, ...), and such rows share
  // their sets every wayBytes / page rows; its block is bounded so that
  // even then they fit the ways given to A.
  int64_t halfWays = std::max<int64_t>(1, (cpu.l2.ways - 1) / 2);
  int64_t l2WayBytes = cpu.l2.sets() * cpu.l2.lineBytes;
  p.cacheN = std::max<int64_t>(p.tileN, halfWays * l2WayBytes /
                                            (p.cacheK * kFloatBytes));
  p.cacheM = std::max<int64_t>(
      p.tileM, halfWays * std::max<int64_t>(1, l2WayBytes / kPageBytes));
  // Packing B pays when a second register tile of rows reads the strip.
  p.streamRows = p.tileM;
  p.l1WayBytes = wayBytes;
  return p;
}
