/* Times kina_storylm0_forward through the raw C ABI: the shared weights
   are irrelevant to the cost, so the buffers hold small deterministic
   values. Prints the median nanoseconds per call over 7 rounds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int32_t kina_storylm0_forward(const int64_t *, const float *, const float *,
                              const float *, const float *, const float *,
                              const float *, const float *, const float *,
                              float *);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(void) {
  int64_t ids[4] = {1, 4, 2, 6};
  float embed[32], wq[16], wk[16], wv[16], wo[16], lm[32], scale = 0.7f,
        mask[16], out[32];
  for (int i = 0; i < 32; ++i)
    embed[i] = lm[i] = (float)((i * 7) % 11) / 11.0f;
  for (int i = 0; i < 16; ++i) {
    wq[i] = wk[i] = wv[i] = wo[i] = (float)((i * 5) % 7) / 7.0f;
    mask[i] = (i % 4) > (i / 4) ? -1e9f : 0.0f;
  }
  enum { Calls = 200000, Rounds = 7 };
  double rounds[Rounds];
  for (int r = 0; r < Rounds; ++r) {
    double start = now();
    for (int i = 0; i < Calls; ++i)
      if (kina_storylm0_forward(ids, embed, wq, wk, wv, wo, lm, &scale, mask,
                                out))
        return 1;
    rounds[r] = (now() - start) / Calls * 1e9;
  }
  qsort(rounds, Rounds, sizeof(double), compare);
  printf("%.1f\n", rounds[Rounds / 2]);
  return 0;
}
