/*===- ABI.h - Constants of the shared-object ABI (C and C++) ---*- C -*-===*
 *
 * The numbers a Kina .so and its callers agree on, defined once: the
 * status every `kina_NAME` export returns, the largest tensor, and the
 * thread pool's limit. Plain C, so that lib/Runtime includes it too.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KINA_ABI_ABI_H
#define KINA_ABI_ABI_H

#include <stdint.h>

/* What every exported function returns. */
enum kina_status {
  KINA_STATUS_OK = 0,
  /* A `gather` id was outside [0, rows); nothing was read out of bounds. */
  KINA_STATUS_GATHER_OUT_OF_RANGE = 1,
  /* A collective failed on some device of an SPMD run (sizes that do not
     agree, a device that never arrived); every device reports it. */
  KINA_STATUS_COLLECTIVE_FAILED = 2,
  /* A buffer the call writes (an output, or a parameter that a result
     reuses) overlaps another buffer of the call; nothing was computed. */
  KINA_STATUS_BUFFERS_OVERLAP = 3,
};

/* Every program function NAME is exported as KINA_EXPORT_PREFIX NAME; each
   .so also exports these (so no function may take their names). */
#define KINA_EXPORT_PREFIX "kina_"
#define KINA_SIGNATURE_SYMBOL "kina_module_signature"
#define KINA_GET_NUM_THREADS_SYMBOL "kina_get_num_threads"
#define KINA_SET_NUM_THREADS_SYMBOL "kina_set_num_threads"

/* The per-device (SPMD) form of a function NAME of a program with a mesh
   is exported as KINA_SPMD_PREFIX NAME: `int32_t (const struct kina_device
   *device, const T *local_input..., R *local_out)`. */
#define KINA_SPMD_PREFIX "kina_spmd_"

/* The runtime's collectives, which per-device code calls with buffer
   addresses as integers (KINA_COLLECTIVE_PREFIX "all_gather", ...); they
   use the buffers during the call only. */
#define KINA_COLLECTIVE_PREFIX "kina_collective_"

/* Element types and reductions, as the generated code names them to the
   collectives (the order of kina::DType). */
enum kina_dtype {
  KINA_DTYPE_F32 = 0,
  KINA_DTYPE_I32 = 1,
  KINA_DTYPE_I64 = 2,
  KINA_DTYPE_F64 = 3,
  KINA_DTYPE_F16 = 4,
  KINA_DTYPE_BF16 = 5
};
enum kina_reduction { KINA_REDUCE_SUM = 0, KINA_REDUCE_MAX = 1 };

/* One device of an SPMD run, as its runner (the threaded simulator, or an
   MPI rank) hands it to a `kina_spmd_NAME` export. Devices are numbered
   row-major over the mesh axes. A collective over a mesh axis of size G
   and stride S (the product of the sizes of the axes after it) involves
   the group {rank + (j - c) * S : j < G}, c = (rank / S) % G. */
struct kina_device {
  int32_t rank, size;
  /* Threads this device's calls may use, itself included (>= 1). */
  int32_t threads;
  /* The backend's. */
  void *context;
  /* Every member of rank's group sends `rows` rows of `bytes` from `send`
     ([rows][bytes]); `recv` gets all of them interleaved in group order,
     [rows][group][bytes] (one row: the members' blocks one after the
     other), so that an all-gather on an inner axis lands in place.
     `send` NULL means in place (as MPI_IN_PLACE): each member's rows are
     already in its own `recv`, at [row][its coordinate]. Returns KINA_STATUS_OK, or a failure that every device of the run
     sees (and nobody waits on). */
  int32_t (*exchange)(const struct kina_device *device, const void *send,
                      void *recv, int64_t rows, int64_t bytes,
                      int32_t group_size, int64_t group_stride);
  /* The largest `status` of all devices of the run, on every device (not
     counted as data moved). */
  int32_t (*agree)(const struct kina_device *device, int32_t status);
  /* An all-to-all within rank's group: `send` holds one block of `bytes`
     per member, [group][bytes]; `recv[j]` gets member j's block for this
     device (its send[c]), for every member j but this device: its own
     block, recv[c], is not written (the caller reads send[c]; copying it
     cost a reduce-scatter a third of its time). Each device sends
     (group - 1) blocks: what a reduce-scatter or an all_to_all moves.
     Fails as `exchange` does. */
  int32_t (*all_to_all)(const struct kina_device *device, const void *send,
                        void *recv, int64_t bytes, int32_t group_size,
                        int64_t group_stride);
  /* Point to point within rank's group, as one step (MPI_Sendrecv):
     `bytes` from `send` to the member at coordinate `to`, and `bytes` into
     `recv` from the member at coordinate `from`; -1 for none (`recv` is
     then left as it is). Each member's target names it as its source.
     Fails as `exchange` does. */
  int32_t (*send_recv)(const struct kina_device *device, const void *send,
                       int32_t to, void *recv, int32_t from, int64_t bytes,
                       int32_t group_size, int64_t group_stride);
};

/* Every tensor has at most 2^60 elements, so that its size in bytes (and
   every index into it) fits in a signed 64-bit integer. */
#define KINA_MAX_ELEMENTS_LOG2 60

/* The most devices a mesh may have. */
#define KINA_MAX_MESH_DEVICES 64

/* The most threads one call may use: the pool's fixed worker table. */
#define KINA_MAX_THREADS 256

#endif /* KINA_ABI_ABI_H */
