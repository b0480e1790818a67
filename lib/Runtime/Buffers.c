/*===- Buffers.c - A call's buffers do not overlap ------------------------===*
 *
 * Compiled code assumes that what it writes aliases nothing it reads
 * (a donated parameter is written where the compiler proved it safe, not
 * where a caller happens to pass the same pointer twice). Each host entry
 * checks it first and refuses the call (KINA_STATUS_BUFFERS_OVERLAP).
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>

/* Whether a buffer the call writes overlaps another of its buffers:
   buffers[i] spans bytes[i] bytes; written[i] is nonzero for an output
   and for a parameter that a result reuses. Read-only buffers may
   overlap each other. */
int32_t kina_buffers_overlap(const char *const *buffers, const int64_t *bytes,
                             const uint8_t *written, int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    if (!written[i])
      continue;
    uintptr_t begin = (uintptr_t)buffers[i];
    uintptr_t end = begin + (uintptr_t)bytes[i];
    for (int32_t j = 0; j < count; ++j) {
      uintptr_t otherBegin = (uintptr_t)buffers[j];
      uintptr_t otherEnd = otherBegin + (uintptr_t)bytes[j];
      if (j != i && begin < otherEnd && otherBegin < end)
        return 1;
    }
  }
  return 0;
}
