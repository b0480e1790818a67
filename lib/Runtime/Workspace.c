/*===- Workspace.c - Allocation of the temporaries of generated code ------===*
 *
 * Generated code allocates its large temporaries through these functions
 * (finalize-memref-to-llvm{use-generic-functions}). glibc hands big blocks
 * back to the kernel when they are freed, so a model called in a loop
 * would fault in, and zero, fresh pages for every temporary on every call.
 * Instead each thread keeps a few freed blocks and reuses one of the same
 * size: from the second call on, a forward touches no new page.
 *
 * A thread's cache holds at most CACHE_SLOTS blocks and a quarter of the
 * machine's memory, and is freed when the thread exits or the .so is
 * unloaded (the latter only for the unloading thread; others' blocks are
 * then left to the process).
 *
 *===----------------------------------------------------------------------===*/

/* madvise and MADV_HUGEPAGE (the runtime compiles as strict C11). */
#define _DEFAULT_SOURCE
#include "ThreadSlot.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define CACHE_MIN_BYTES ((size_t)64 << 10) /* smaller blocks: plain malloc */
/* A gradient keeps its forward's activations until the backward reads
   them: hundreds of temporaries are freed by the end of a call (350 for
   the GPT's loss gradients), and a cache smaller than that set would
   evict, hand back and fault in some of it again on every call. So the
   bound is a share of the machine's memory, not a fixed size: the 110M
   GPT's training step frees 1.3 GB of temporaries per call, and a cache of
   1 GiB faulted in about 150 MB of them on every step (0.56 s a step on
   two threads against 0.52 s with all kept, at the same peak memory). */
#define CACHE_SHARE_OF_MEMORY 4
#define CACHE_BYTES_UNKNOWN_MEMORY ((size_t)1 << 30)
#define CACHE_SLOTS 1024
/* Each block starts with its size; the caller's memory follows, 16-byte
   aligned as malloc's is. */
#define HEADER 16
#define HUGE_PAGE ((size_t)2 << 20)

typedef struct cache {
  void *blocks[CACHE_SLOTS];
  size_t sizes[CACHE_SLOTS];
  int count;
  size_t bytes;
} cache_t;

static void release(void *opaque) {
  cache_t *c = opaque;
  for (int i = 0; i < c->count; ++i)
    free(c->blocks[i]);
  free(c);
}

/* Set once, when the .so is loaded. */
static size_t cache_bytes = CACHE_BYTES_UNKNOWN_MEMORY;

__attribute__((constructor)) static void size_caches(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    cache_bytes = (size_t)pages * (size_t)page / CACHE_SHARE_OF_MEMORY;
}

static struct kina_thread_slot cache_slot =
    KINA_THREAD_SLOT(sizeof(cache_t), release);

/* A block of `bytes` on 2 MiB pages where the kernel has them. Where
   transparent huge pages are only on request (`madvise`, as on many
   virtual machines), a large temporary on 4 KiB pages costs a fault per
   page on first use and a TLB miss per page on every pass: the GPT's
   training step took 6.5 s per step on 4 KiB pages and 2 s on 2 MiB ones.
   Aligned, so that the pages are whole; freed with free(). */
static void *huge_block(size_t bytes) {
  size_t rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  void *block = aligned_alloc(HUGE_PAGE, rounded);
  if (block)
    madvise(block, rounded, MADV_HUGEPAGE); /* advice: failure is harmless */
  return block;
}

/* The calling thread's cache; created on first use when `create`. */
static cache_t *thread_cache(int create) {
  return kina_thread_slot_get(&cache_slot, create);
}

/* Not inlined: generated code calls it once per temporary, and a copy of
   the cache logic at every call grew big functions for nothing. */
__attribute__((noinline)) void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  cache_t *c = size >= CACHE_MIN_BYTES ? thread_cache(0) : NULL;
  for (int i = c ? c->count - 1 : -1; i >= 0; --i)
    if (c->sizes[i] == size) {
      void *block = c->blocks[i];
      c->bytes -= size;
      --c->count;
      c->blocks[i] = c->blocks[c->count];
      c->sizes[i] = c->sizes[c->count];
      return (char *)block + HEADER;
    }
  if (size > SIZE_MAX - HEADER - HUGE_PAGE)
    return NULL;
  char *block = size + HEADER >= HUGE_PAGE ? huge_block(size + HEADER)
                                           : malloc(size + HEADER);
  if (!block)
    return NULL;
  *(uint64_t *)block = size;
  return block + HEADER;
}

__attribute__((noinline)) void _mlir_memref_to_llvm_free(void *pointer) {
  if (!pointer)
    return;
  char *block = (char *)pointer - HEADER;
  uint64_t size = *(uint64_t *)block;
  cache_t *c = size >= CACHE_MIN_BYTES && size <= cache_bytes
                   ? thread_cache(1)
                   : NULL;
  if (!c) {
    free(block);
    return;
  }
  /* Make room: the oldest blocks go first. */
  while (c->count > 0 &&
         (c->count == CACHE_SLOTS || c->bytes + size > cache_bytes)) {
    free(c->blocks[0]);
    c->bytes -= c->sizes[0];
    --c->count;
    for (int i = 0; i < c->count; ++i) {
      c->blocks[i] = c->blocks[i + 1];
      c->sizes[i] = c->sizes[i + 1];
    }
  }
  c->blocks[c->count] = block;
  c->sizes[c->count] = size;
  ++c->count;
  c->bytes += size;
}

/* After dlclose, no thread may call into this code at its exit. */
__attribute__((destructor)) static void forget_caches(void) {
  kina_thread_slot_forget(&cache_slot);
}
