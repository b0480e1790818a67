/* Calls a step whose results reuse its parameters' buffers, through the
   generated header only (test/Target/donated.test). */
#include "donated.h"

#include <stdio.h>

int main(void) {
  float w[64], m[64], g[64], loss = 0, twice[64];
  for (int i = 0; i < 64; ++i) {
    w[i] = (float)i;
    m[i] = 2.0f;
    g[i] = 1.0f;
  }
  int status = kina_step(w, m, g, &loss);
  /* m' = m / 2 + g = 2, w' = w - m' = i - 2, loss = sum i^2 = 85344 */
  int wrong = 0;
  for (int i = 0; i < 64; ++i)
    wrong += m[i] != 2.0f || w[i] != (float)i - 2.0f;
  printf("step status %d, wrong %d, loss %g\n", status, wrong, loss);
  /* The gradient is the buffer the step writes its weight into. */
  printf("g is w: status %d\n", kina_step(w, m, w, &loss));
  /* An output inside an input: refused, nothing written. */
  printf("out overlaps x: status %d\n", kina_scaled(w, w + 8));
  printf("x unchanged: %d\n", w[8] == 6.0f);
  printf("distinct: status %d, twice[3] = %g\n", kina_scaled(w, twice),
         twice[3]);
  return 0;
}
