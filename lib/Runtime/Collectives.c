/*===- Collectives.c - kina_collective_<name>, on any backend -------------===*
 *
 * Generated per-device code calls these for the collective ops of the
 * kina dialect. Each is built on the primitives its device's runner
 * provides, `exchange` (an all-gather of equal byte blocks within a
 * group), `all_to_all` and `send_recv` (point to point), so the threaded
 *simulator and MPI share every layout and every reduction order: a sum adds the
 *members' blocks in group order on every device, so all devices get identical
 *bits.
 *
 * Each moves what the cost model (lib/Sharding/Reshard.cpp,
 * bytesSentPerDevice) says, for a block of L bytes on a group of n:
 * all_gather (n-1)L; reduce_scatter and all_to_all (n-1)L/n, as one
 * all-to-all; all_reduce a reduce-scatter then an all-gather of the
 * reduced blocks, 2(n-1) ceil(count/n) elements; permute L, on the third
 * primitive, `send_recv`, from the devices that have a target.
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
                          device->all_to_all && device->send_recv &&
                          device->size >= 1 && device->rank >= 0 &&
                          device->rank < device->size
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

/* recv[j] = member j's send[c] ([group][bytes] each), but for this
   device's own, recv[c], which is not written; as `exchange`. */
static int all_to_all(const void *send, void *recv, int64_t bytes,
                      int64_t group_size, int64_t group_stride) {
  if (!failed()) {
    const struct kina_device *device = kina_current_device();
    int32_t status = device->all_to_all(device, send, recv, bytes,
                                        (int32_t)group_size, group_stride);
    if (status == KINA_STATUS_OK)
      return 1;
    fail(status);
  }
  memset(recv, 0, (size_t)(bytes * group_size));
  return 0;
}

/* dst[j][o] = src[o][j], blocks of `block` bytes: [outer][group] to
   [group][outer] (and, with outer and group swapped, back). */
static void transpose_blocks(const void *src, void *dst, int64_t outer,
                             int64_t group_size, int64_t block) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < group_size; ++j)
      memcpy((char *)dst + (j * outer + o) * block,
             (const char *)src + (o * group_size + j) * block, (size_t)block);
}

/* out[i] = the reduction of member j's block[j][i] over the group, in
   group order. */
#define REDUCE(T, IS_MAX)                                                      \
  do {                                                                         \
    T *result = (T *)out;                                                      \
    for (int64_t i = 0; i < count; ++i) {                                      \
      T acc = ((const T *)block[0])[i];                                        \
      for (int64_t j = 1; j < group_size; ++j) {                               \
        T next = ((const T *)block[j])[i];                                     \
        acc =                                                                  \
            (IS_MAX) ? (next > acc || next != next ? next : acc) : acc + next; \
      }                                                                        \
      result[i] = acc;                                                         \
    }                                                                          \
  } while (0)

/* The same over 16-bit floats: accumulated in float, rounded once. */
#define REDUCE_16(TO_FLOAT, FROM_FLOAT, IS_MAX)                                \
  do {                                                                         \
    uint16_t *result = (uint16_t *)out;                                        \
    for (int64_t i = 0; i < count; ++i) {                                      \
      float acc = TO_FLOAT(((const uint16_t *)block[0])[i]);                   \
      for (int64_t j = 1; j < group_size; ++j) {                               \
        float next = TO_FLOAT(((const uint16_t *)block[j])[i]);                \
        acc =                                                                  \
            (IS_MAX) ? (next > acc || next != next ? next : acc) : acc + next; \
      }                                                                        \
      result[i] = FROM_FLOAT(acc);                                             \
    }                                                                          \
  } while (0)

static uint32_t float_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

static float bits_float(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

static float bf16_to_float(uint16_t word) {
  return bits_float((uint32_t)word << 16);
}

/* Rounded to nearest even; a NaN stays a (quiet) NaN. */
static uint16_t float_to_bf16(float value) {
  uint32_t bits = float_bits(value);
  if (value != value)
    return (uint16_t)((bits >> 16) | 0x40);
  return (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

/* Integer code (no F16C, no libcall): f16 has 5 exponent bits (bias 15)
   and 10 mantissa bits. */
static float f16_to_float(uint16_t word) {
  uint32_t sign = (uint32_t)(word & 0x8000) << 16;
  uint32_t exponent = (word >> 10) & 0x1f, mantissa = word & 0x3ff;
  if (exponent == 0x1f)
    return bits_float(sign | 0x7f800000 | (mantissa << 13));
  if (exponent)
    return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
  /* Zero or subnormal: mantissa * 2^-24, exact in float. */
  float magnitude = (float)mantissa * 5.9604644775390625e-8f;
  return sign ? -magnitude : magnitude;
}

/* `kept` and what `shift` drops from `full`, rounded to nearest even. */
static uint32_t round_shifted(uint32_t full, uint32_t shift) {
  uint32_t kept = full >> shift;
  uint32_t rest = full & ((1u << shift) - 1), half = 1u << (shift - 1);
  return kept + (rest > half || (rest == half && (kept & 1)));
}

/* Rounded to nearest even (overflow gives inf); a NaN stays a quiet NaN. */
static uint16_t float_to_f16(float value) {
  uint32_t bits = float_bits(value);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
  uint32_t exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffff;
  if (exponent == 0xff)
    return sign | 0x7c00 | (mantissa ? 0x200 | (mantissa >> 13) : 0);
  int32_t biased = (int32_t)exponent - 127 + 15;
  if (biased >= 0x1f)
    return sign | 0x7c00;
  if (biased <= 0) { /* a subnormal of f16, or zero */
    if (biased < -10)
      return sign;
    return sign | (uint16_t)round_shifted(mantissa | 0x800000,
                                          (uint32_t)(14 - biased));
  }
  /* A carry out of the mantissa moves into the exponent, up to inf. */
  return sign | (uint16_t)round_shifted(((uint32_t)biased << 23) | mantissa,
                                        13);
}

static void reduce_blocks(const void *const *block, void *out, int64_t count,
                          int64_t dtype, int64_t kind, int64_t group_size) {
  int is_max = kind == KINA_REDUCE_MAX;
  switch (dtype) {
  case KINA_DTYPE_F32:
    REDUCE(float, is_max);
    break;
  case KINA_DTYPE_F64:
    REDUCE(double, is_max);
    break;
  case KINA_DTYPE_F16:
    REDUCE_16(f16_to_float, float_to_f16, is_max);
    break;
  case KINA_DTYPE_BF16:
    REDUCE_16(bf16_to_float, float_to_bf16, is_max);
    break;
  case KINA_DTYPE_I32:
    REDUCE(int32_t, is_max);
    break;
  default:
    REDUCE(int64_t, is_max);
    break;
  }
}

static int64_t element_bytes(int64_t dtype) {
  switch (dtype) {
  case KINA_DTYPE_I64:
  case KINA_DTYPE_F64:
    return 8;
  case KINA_DTYPE_F16:
  case KINA_DTYPE_BF16:
    return 2;
  default:
    return 4;
  }
}

/* A temporary of `bytes`; on failure the device fails, `out` (of
   `out_bytes`) is zeroed and NULL returned. */
static void *scratch(int64_t bytes, void *out, int64_t out_bytes) {
  void *buffer = _mlir_memref_to_llvm_alloc((uint64_t)(bytes > 0 ? bytes : 1));
  if (!buffer) {
    fail(KINA_STATUS_COLLECTIVE_FAILED);
    memset(out, 0, (size_t)out_bytes);
  }
  return buffer;
}

/* send: [group][count] elements; out: [count], the reduction over the
   group of every member's send[c], in group order. This device's own
   block is read where it is (the all-to-all does not copy it). */
static void reduce_my_block(const void *send, void *out, int64_t count,
                            int64_t dtype, int64_t kind, int64_t group_size,
                            int64_t group_stride) {
  int64_t bytes = count * element_bytes(dtype);
  void *parts = scratch(bytes * group_size, out, bytes);
  if (!parts)
    return;
  if (!all_to_all(send, parts, bytes, group_size, group_stride)) {
    memset(out, 0, (size_t)bytes);
    _mlir_memref_to_llvm_free(parts);
    return;
  }
  int64_t mine = kina_collective_coordinate(group_size, group_stride);
  const void *block[KINA_MAX_MESH_DEVICES];
  for (int64_t j = 0; j < group_size; ++j)
    block[j] = j == mine ? (const char *)send + mine * bytes
                         : (const char *)parts + j * bytes;
  reduce_blocks(block, out, count, dtype, kind, group_size);
  _mlir_memref_to_llvm_free(parts);
}

/* in, out: `count` elements; every device gets the sum (or max): each
   reduces its block of ceil(count / group) elements (the tail padded),
   then the reduced blocks are gathered. */
void kina_collective_all_reduce(int64_t in, int64_t out, int64_t count,
                                int64_t dtype, int64_t kind,
                                int64_t group_size, int64_t group_stride) {
  int64_t element = element_bytes(dtype);
  int64_t block = (count + group_size - 1) / group_size;
  int64_t padded = block * group_size * element;
  int64_t mine = kina_collective_coordinate(group_size, group_stride);
  void *result = (void *)(intptr_t)out;
  const void *send = (const void *)(intptr_t)in;
  void *buffer = NULL;
  if (block * group_size != count) {
    buffer = scratch(2 * padded, result, count * element);
    if (!buffer)
      return;
    memset(buffer, 0, (size_t)padded);
    memcpy(buffer, send, (size_t)(count * element));
    send = buffer;
    result = (char *)buffer + padded;
  }
  reduce_my_block(send, (char *)result + mine * block * element, block, dtype,
                  kind, group_size, group_stride);
  exchange(NULL, result, 1, block * element, group_size, group_stride);
  if (buffer) {
    memcpy((void *)(intptr_t)out, result, (size_t)(count * element));
    _mlir_memref_to_llvm_free(buffer);
  }
}

/* in: [outer][group][block] elements; out: [outer][block], the sum of
   this device's block. */
void kina_collective_reduce_scatter(int64_t in, int64_t out, int64_t outer,
                                    int64_t block, int64_t dtype,
                                    int64_t group_size, int64_t group_stride) {
  int64_t bytes = block * element_bytes(dtype);
  const void *send = (const void *)(intptr_t)in;
  void *packed = NULL;
  if (outer > 1) { /* the members' blocks of every row together */
    packed = scratch(outer * group_size * bytes, (void *)(intptr_t)out,
                     outer * bytes);
    if (!packed)
      return;
    transpose_blocks(send, packed, outer, group_size, bytes);
    send = packed;
  }
  reduce_my_block(send, (void *)(intptr_t)out, outer * block, dtype,
                  KINA_REDUCE_SUM, group_size, group_stride);
  _mlir_memref_to_llvm_free(packed);
}

/* A split moved from one axis to another. in: seen on the new axis as
   [to_outer][group][to_block] bytes, member j gets block j of each row;
   out: seen on the old axis as [from_outer][group][from_block], member
   j's piece lands at block j of each row. One all-to-all of
   to_outer * to_block (= from_outer * from_block) bytes per member. */
void kina_collective_all_to_all(int64_t in, int64_t out, int64_t to_outer,
                                int64_t to_block, int64_t from_outer,
                                int64_t from_block, int64_t group_size,
                                int64_t group_stride) {
  int64_t piece = to_outer * to_block;
  void *buffer = scratch(2 * piece * group_size, (void *)(intptr_t)out,
                         piece * group_size);
  if (!buffer)
    return;
  char *send = buffer, *recv = send + piece * group_size;
  transpose_blocks((const void *)(intptr_t)in, send, to_outer, group_size,
                   to_block);
  if (all_to_all(send, recv, piece, group_size, group_stride)) {
    int64_t mine = kina_collective_coordinate(group_size, group_stride);
    memcpy(recv + mine * piece, send + mine * piece, (size_t)piece);
  }
  transpose_blocks(recv, (void *)(intptr_t)out, group_size, from_outer,
                   from_block);
  _mlir_memref_to_llvm_free(buffer);
}

/* out = the value of the member `shift` places before this device on the
   axis ([bytes]); this device's goes to the member `shift` places after.
   Without `cyclic`, a member with no source gets zeros and one with no
   target sends nothing. */
void kina_collective_permute(int64_t in, int64_t out, int64_t bytes,
                             int64_t shift, int64_t cyclic, int64_t group_size,
                             int64_t group_stride) {
  int64_t mine = kina_collective_coordinate(group_size, group_stride);
  int64_t to = mine + shift, from = mine - shift;
  if (cyclic) {
    to = ((to % group_size) + group_size) % group_size;
    from = ((from % group_size) + group_size) % group_size;
  }
  if (to < 0 || to >= group_size)
    to = -1;
  if (from < 0 || from >= group_size)
    from = -1;
  void *recv = (void *)(intptr_t)out;
  if (!failed()) {
    const struct kina_device *device = kina_current_device();
    int32_t status = device->send_recv(device, (const void *)(intptr_t)in,
                                       (int32_t)to, recv, (int32_t)from, bytes,
                                       (int32_t)group_size, group_stride);
    if (status == KINA_STATUS_OK) {
      if (from < 0)
        memset(recv, 0, (size_t)bytes);
      return;
    }
    fail(status);
  }
  memset(recv, 0, (size_t)bytes);
}
