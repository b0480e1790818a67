/*===- ABI.h - Constants of the shared-object ABI (C and C++) ---*- C -*-===*
 *
 * The numbers a Kina .so and its callers agree on, defined once: the
 * status every `kina_NAME` export returns, the largest tensor, and the
 * thread pool's limit. Plain C, so that lib/Runtime includes it too.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KINA_API_ABI_H
#define KINA_API_ABI_H

/* What every exported function returns. */
enum kina_status {
  KINA_STATUS_OK = 0,
  /* A `gather` id was outside [0, rows); nothing was read out of bounds. */
  KINA_STATUS_GATHER_OUT_OF_RANGE = 1,
};

/* Every program function NAME is exported as KINA_EXPORT_PREFIX NAME; each
   .so also exports these (so no function may take their names). */
#define KINA_EXPORT_PREFIX "kina_"
#define KINA_SIGNATURE_SYMBOL "kina_module_signature"
#define KINA_GET_NUM_THREADS_SYMBOL "kina_get_num_threads"
#define KINA_SET_NUM_THREADS_SYMBOL "kina_set_num_threads"

/* Every tensor has at most 2^60 elements, so that its size in bytes (and
   every index into it) fits in a signed 64-bit integer. */
#define KINA_MAX_ELEMENTS_LOG2 60

/* The most devices a mesh may have. */
#define KINA_MAX_MESH_DEVICES 64

/* The most threads one call may use: the pool's fixed worker table. */
#define KINA_MAX_THREADS 256

#endif /* KINA_API_ABI_H */
