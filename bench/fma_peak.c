/* This CPU's fp32 FMA peak on one core: independent chains of vector FMAs
   (widest vectors the host has), so that latency never limits. Prints
   GFLOP/s, the best of 3 rounds. Built with -O2 -march=native. */
#include <stdio.h>
#include <time.h>

#ifdef __AVX512F__
#define LANES 16
#define CHAINS 24
#else
#define LANES 8
#define CHAINS 12
#endif
typedef float vec __attribute__((vector_size(LANES * 4)));

int main(void) {
  vec acc[CHAINS], b, c;
  for (int i = 0; i < LANES; ++i)
    b[i] = 0.9999f, c[i] = 1e-4f;
  for (int j = 0; j < CHAINS; ++j)
    for (int i = 0; i < LANES; ++i)
      acc[j][i] = j * 1e-3f;
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    const long steps = 50000000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long s = 0; s < steps; ++s)
      for (int j = 0; j < CHAINS; ++j)
        acc[j] = acc[j] * b + c;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    double gflops = 2.0 * LANES * CHAINS * steps / seconds / 1e9;
    best = gflops > best ? gflops : best;
  }
  float sink = 0;
  for (int j = 0; j < CHAINS; ++j)
    sink += acc[j][0];
  printf("%.1f %g\n", best, sink);
  return 0;
}
