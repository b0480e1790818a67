/* Calls the Section 5 shared object through its generated header only. */
#include "tp_vocab.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  float residual[1][4][4], lm_head[4][8], logits[1][4][8];
  for (int t = 0; t < 4; ++t)
    for (int d = 0; d < 4; ++d)
      residual[0][t][d] = (float)(t + 1);
  for (int d = 0; d < 4; ++d)
    for (int v = 0; v < 8; ++v)
      lm_head[d][v] = (float)v;
  int status = kina_tp_logits(&residual[0][0][0], &lm_head[0][0],
                              &logits[0][0][0]);
  /* logits[t][v] = sum_d (t + 1) * v = 4 (t + 1) v */
  int wrong = 0;
  for (int t = 0; t < 4; ++t)
    for (int v = 0; v < 8; ++v)
      wrong += logits[0][t][v] != 4.0f * (t + 1) * v;
  printf("tp_logits status %d, wrong %d, logits[0][3][7] = %g\n", status,
         wrong, logits[0][3][7]);

  int64_t ids[1][4] = {{1, 4, 2, 9}};
  float embed[8][4] = {{0}}, w[4][4] = {{0}}, scale = 0.5f, mask[4][4] = {{0}};
  status = kina_main(&ids[0][0], &embed[0][0], &w[0][0], &w[0][0], &w[0][0],
                     &w[0][0], &lm_head[0][0], &scale, &mask[0][0],
                     &logits[0][0][0]);
  printf("main with id 9 of 8 rows: status %d\n", status);
  printf("signature mentions tp_logits: %d\n",
         strstr(kina_module_signature(), "\"name\":\"tp_logits\"") != NULL);
  kina_set_num_threads(3);
  int three = kina_get_num_threads();
  kina_set_num_threads(0);
  printf("threads: set 3 -> %d, default %d\n", three,
         kina_get_num_threads());
  return 0;
}
