/*===- Collectives.c - kina_collective_<name>, on any backend -------------===*
 *
 * Generated per-device code calls these for the collective ops of the
 * kina dialect. Each is built on the one primitive its device's runner
 * provides, `exchange` (an all-gather of equal byte blocks within a
 * group), so the threaded simulator and MPI share every layout and every
 * reduction order: a sum adds the members' blocks in group order on every
 * device, so all devices get identical bits.
 *
 * Buffers are dense, row-major, passed as addresses. A tensor cut on axis
 * A is seen as [outer][A...]: `outer` rows (the product of the dims before
 * A), each holding the axis and everything after it.
 *
 * After a failure (the device's status is sticky) a collective only zeroes
 * its output: the code runs to its end and every device returns the
 * failure, agreed on in kina_device_leave.
 *
 *===----------------------------------------------------------------------===*/

#include <stdlib.h>
#include <string.h>

#include "Device.h"
#include "ThreadSlot.h"

typedef struct device_state {
  const struct kina_device *device;
  int32_t status;
} device_state_t;

static struct kina_thread_slot state_slot =
    KINA_THREAD_SLOT(sizeof(device_state_t), free);

/* After dlclose, no thread may call into this code at its exit. */
__attribute__((destructor)) static void forget_states(void) {
  kina_thread_slot_forget(&state_slot);
}

static device_state_t *thread_state(void) {
  return kina_thread_slot_get(&state_slot, 1);
}

const struct kina_device *kina_current_device(void) {
  device_state_t *state = kina_thread_slot_get(&state_slot, 0);
  return state ? state->device : NULL;
}

static void fail(int32_t status) {
  device_state_t *state = thread_state();
  if (state && state->status == KINA_STATUS_OK)
    state->status = status;
}

static int failed(void) {
  device_state_t *state = thread_state();
  return !state || !state->device || state->status != KINA_STATUS_OK;
}

/* recv[o][j] = row o of member j's send ([rows][bytes] each), for the
   group of (size, stride); zeroes recv and returns 0 when the device has
   failed or the exchange does. */
static int exchange(const void *send, void *recv, int64_t rows, int64_t bytes,
                    int64_t group_size, int64_t group_stride) {
  if (!failed()) {
    const struct kina_device *device = kina_current_device();
    int32_t status = device->exchange(device, send, recv, rows, bytes,
                                      (int32_t)group_size, group_stride);
    if (status == KINA_STATUS_OK)
      return 1;
    fail(status);
  }
  memset(recv, 0, (size_t)(rows * bytes * group_size));
  return 0;
}

/* This device's coordinate on the axis of (size, stride), 0 outside a
   run; generated code calls it to place its own block of an all-gather. */
int64_t kina_collective_coordinate(int64_t group_size, int64_t group_stride) {
  const struct kina_device *device = kina_current_device();
  return device ? (device->rank / group_stride) % group_size : 0;
}

/* The code generated for a `kina_spmd_NAME` export brackets its call. */
void kina_device_enter(const struct kina_device *device) {
  device_state_t *state = thread_state();
  if (!state)
    return; /* out of memory: every collective then reports a failure */
  state->device = device;
  state->status = device && device->exchange && device->agree &&
                          device->size >= 1 &&
                          device->rank >= 0 && device->rank < device->size
                      ? KINA_STATUS_OK
                      : KINA_STATUS_COLLECTIVE_FAILED;
}

/* The status every device returns: the largest any device has (its own
   `status`, or a collective's failure). */
int32_t kina_device_leave(int32_t status) {
  device_state_t *state = thread_state();
  if (!state || !state->device)
    return KINA_STATUS_COLLECTIVE_FAILED;
  const struct kina_device *device = state->device;
  if (state->status != KINA_STATUS_OK)
    status = state->status;
  status = device->agree ? device->agree(device, status)
                         : KINA_STATUS_COLLECTIVE_FAILED;
  state->device = NULL;
  state->status = KINA_STATUS_OK;
  return status;
}

/* out: [outer][group][block] bytes, this device's block already in place
   (the generated code computes it there); gets the others'. */
void kina_collective_all_gather(int64_t out, int64_t outer, int64_t block,
                                int64_t group_size, int64_t group_stride) {
  exchange(NULL, (void *)(intptr_t)out, outer, block, group_size,
           group_stride);
}

/* in: [outer][group][block] bytes; out: [outer][block], this device's. */
void kina_collective_all_slice(int64_t in, int64_t out,
                                           int64_t outer, int64_t block,
                                           int64_t group_size,
                                           int64_t group_stride) {
  int64_t mine = kina_collective_coordinate(group_size, group_stride);
  for (int64_t o = 0; o < outer; ++o)
    memcpy((char *)(intptr_t)out + o * block,
           (const char *)(intptr_t)in + (o * group_size + mine) * block,
           (size_t)block);
}

/* out[i] = reduction over the group of in[i], in group order. */
#define REDUCE(T, IS_MAX)                                                      \
  do {                                                                         \
    const T *parts = (const T *)recv;                                          \
    T *result = (T *)dst;                                                      \
    for (int64_t o = 0; o < outer; ++o)                                        \
      for (int64_t i = 0; i < count; ++i) {                                    \
        const T *first = parts + o * stride_elems + offset + i;                \
        T acc = *first;                                                        \
        for (int64_t j = 1; j < group_size; ++j) {                             \
          T next = first[j * member_elems];                                    \
          acc = (IS_MAX) ? (next > acc || next != next ? next : acc)           \
                         : acc + next;                                         \
        }                                                                      \
        result[o * count + i] = acc;                                           \
      }                                                                        \
  } while (0)

/* Exchanges `outer * row` elements per member, then reduces, per row, the
   `count` elements at `offset`: the whole of it (all_reduce), or this
   device's block (reduce_scatter). */
static void reduce(const void *src, void *dst, int64_t outer, int64_t row,
                   int64_t offset, int64_t count, int64_t dtype, int64_t kind,
                   int64_t group_size, int64_t group_stride) {
  int64_t element = dtype == KINA_DTYPE_I64 ? 8 : 4;
  int64_t member_elems = outer * row, stride_elems = row;
  void *recv = _mlir_memref_to_llvm_alloc(
      (uint64_t)(member_elems * element * group_size));
  if (!recv) {
    fail(KINA_STATUS_COLLECTIVE_FAILED);
    memset(dst, 0, (size_t)(outer * count * element));
    return;
  }
  exchange(src, recv, 1, member_elems * element, group_size, group_stride);
  int is_max = kind == KINA_REDUCE_MAX;
  switch (dtype) {
  case KINA_DTYPE_F32:
    REDUCE(float, is_max);
    break;
  case KINA_DTYPE_I32:
    REDUCE(int32_t, is_max);
    break;
  default:
    REDUCE(int64_t, is_max);
    break;
  }
  _mlir_memref_to_llvm_free(recv);
}

/* in, out: `count` elements; every device gets the sum (or max). */
void kina_collective_all_reduce(int64_t in, int64_t out,
                                            int64_t count, int64_t dtype,
                                            int64_t kind, int64_t group_size,
                                            int64_t group_stride) {
  reduce((const void *)(intptr_t)in, (void *)(intptr_t)out, 1, count, 0,
         count, dtype, kind, group_size, group_stride);
}

/* in: [outer][group][block] elements; out: [outer][block], the sum of
   this device's block. */
void kina_collective_reduce_scatter(int64_t in, int64_t out,
                                                int64_t outer, int64_t block,
                                                int64_t dtype,
                                                int64_t group_size,
                                                int64_t group_stride) {
  int64_t mine = kina_collective_coordinate(group_size, group_stride);
  reduce((const void *)(intptr_t)in, (void *)(intptr_t)out, outer,
         group_size * block, mine * block, block, dtype, KINA_REDUCE_SUM,
         group_size, group_stride);
}
