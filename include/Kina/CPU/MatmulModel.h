//===- MatmulModel.h - Matmul kernel parameters from the CPU ----*- C++ -*-===//
//
// An analytic model in the style of BLIS ("Analytical Modeling Is Enough
// for High-Performance BLIS", Low et al., TOMS 2016): the register tile
// from the vector registers and the FMA latency, the cache blocking from
// the caches' sizes and associativity. kina-tile-matmuls takes the result
// as its options.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_CPU_MATMULMODEL_H
#define KINA_CPU_MATMULMODEL_H

#include "Kina/CPU/CPU.h"

namespace mlir::kina {

/// The most rows a register tile may have (kina-tile-matmuls' limit): the
/// accumulators of 16 rows of two vectors fill AVX-512's 32 registers.
inline constexpr int64_t kMaxTileRows = 16;

struct MatmulParameters {
  /// Register tile: rows (broadcast elements of A) x columns (vectors of B).
  int64_t tileM = 0, tileN = 0;
  /// Upper bounds of the cache tiles: a K x tileN strip of packed B stays
  /// in L1 (cacheK); cacheM rows of A's K block and a K x cacheN block of
  /// packed B share L2.
  int64_t cacheM = 0, cacheN = 0, cacheK = 0;
  /// Matmuls of at most this many rows read B in place: a packed strip
  /// would be read by a single register tile.
  int64_t streamRows = 0;
  /// Bytes of one way of L1 (its size over its associativity): rows whose
  /// pitch is a multiple of it all fall into one L1 set.
  int64_t l1WayBytes = 0;
};

MatmulParameters chooseMatmulParameters(const CPUDescription &cpu);

} // namespace mlir::kina

#endif // KINA_CPU_MATMULMODEL_H
