/*===- Device.h - The device a thread runs, inside the runtime --*- C -*-===*
 *
 * Shared by the runtime's parts (not an interface of the .so): while a
 * `kina_spmd_NAME` export runs, its thread knows which device it is.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KINA_LIB_RUNTIME_DEVICE_H
#define KINA_LIB_RUNTIME_DEVICE_H

#include "Kina/ABI/ABI.h"

/* The device the calling thread runs, or NULL outside an SPMD export. */
const struct kina_device *kina_current_device(void);

/* The allocator of temporaries (Workspace.c): a thread's freed blocks are
   reused, so a collective called in a loop touches no new page. */
void *_mlir_memref_to_llvm_alloc(uint64_t size);
void _mlir_memref_to_llvm_free(void *pointer);

#endif /* KINA_LIB_RUNTIME_DEVICE_H */
