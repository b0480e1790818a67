/* This CPU's fp32 FMA peak on one core: independent chains of FMAs on the
   widest vectors the host has (512-bit with AVX-512, else 256-bit), enough
   of them to hide the FMA latency on two pipes. The chains are named
   variables, so they live in registers: an array of accumulators is kept
   in memory by the compiler, and store-to-load forwarding then limits the
   loop to a fraction of the peak. Prints GFLOP/s (the best of 5 rounds),
   a sink value, and the ISA measured. Built with -O2 -march=native.
   With -DDOT_BF16 (a CPU with AVX512_BF16): the BF16 dot-product peak
   instead, chains of vdpbf16ps (per 32-bit lane two BF16 products added
   into F32, 4 flops). */
#include <stdio.h>
#include <time.h>

#ifdef DOT_BF16
#include <immintrin.h>
#define LANES 16
#define FLOPS_PER_LANE 4
#define ISA "avx512bf16"
typedef __m512 vec;
typedef __m512bh operand;
/* BF16 1.0 and 2^-31: the sums stay small and normal. */
#define OPERANDS                                                               \
  operand b = (operand)_mm512_set1_epi16(0x3f80),                              \
          c = (operand)_mm512_set1_epi16(0x3000);
#define DECLARE(i) vec a##i = _mm512_set1_ps((float)(i + 1) * 1e-3f);
#define STEP(i) a##i = _mm512_dpbf16_ps(a##i, b, c);
#else
#ifdef __AVX512F__
#define LANES 16
#define ISA "avx512"
#else
#define LANES 8
#define ISA "avx2"
#endif
#define FLOPS_PER_LANE 2
typedef float vec __attribute__((vector_size(LANES * 4)));
#define OPERANDS                                                               \
  vec b, c;                                                                    \
  for (int i = 0; i < LANES; ++i)                                              \
    b[i] = 0.9999f, c[i] = 1e-4f;
#define DECLARE(i) vec a##i = b * (float)(i + 1);
#define STEP(i) a##i = __builtin_elementwise_fma(a##i, b, c);
#endif
#define CHAINS 12

#define FOR_EACH_CHAIN(X)                                                      \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define SUM(i) sink += a##i[0];

/* 512-bit vectors wherever the host has them: clang's -march=native on
   Intel's AVX-512 CPUs prefers 256-bit ones and split these chains into
   ymm FMAs, measuring half the peak (141 against 261 GFLOP/s on a Xeon,
   below what its sgemm ran at). */
__attribute__((min_vector_width(512))) int main(void) {
  OPERANDS
  FOR_EACH_CHAIN(DECLARE)
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    const long steps = 20000000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long s = 0; s < steps; ++s) {
      FOR_EACH_CHAIN(STEP)
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    double gflops = (double)FLOPS_PER_LANE * LANES * CHAINS * steps / seconds / 1e9;
    best = gflops > best ? gflops : best;
  }
  float sink = 0;
  FOR_EACH_CHAIN(SUM)
  printf("%.1f %g %s\n", best, sink, ISA);
  return 0;
}
