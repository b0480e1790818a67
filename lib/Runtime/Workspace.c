/*===- Workspace.c - Allocation of the temporaries of generated code ------===*
 *
 * Generated code allocates its large temporaries through these functions
 * (finalize-memref-to-llvm{use-generic-functions}). glibc hands big blocks
 * back to the kernel when they are freed, so a model called in a loop
 * would fault in, and zero, fresh pages for every temporary on every call.
 * Instead each thread keeps a few freed blocks and reuses one of the same
 * size: from the second call on, a forward touches no new page.
 *
 * A thread's cache holds at most CACHE_SLOTS blocks and CACHE_BYTES bytes,
 * and is freed when the thread exits or the .so is unloaded (the latter
 * only for the unloading thread; others' blocks are then left to the
 * process).
 *
 *===----------------------------------------------------------------------===*/

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define CACHE_MIN_BYTES ((size_t)64 << 10) /* smaller blocks: plain malloc */
#define CACHE_BYTES ((size_t)512 << 20)
#define CACHE_SLOTS 32
/* Each block starts with its size; the caller's memory follows, 16-byte
   aligned as malloc's is. */
#define HEADER 16

typedef struct cache {
  void *blocks[CACHE_SLOTS];
  size_t sizes[CACHE_SLOTS];
  int count;
  size_t bytes;
} cache_t;

/* Per-thread caches hang off a pthread key, not __thread: TLS would make
   the .so need ld-linux's __tls_get_addr. */
static pthread_key_t cache_key;
static pthread_once_t cache_key_once = PTHREAD_ONCE_INIT;
static int have_cache_key;

static void release(void *opaque) {
  cache_t *c = opaque;
  for (int i = 0; i < c->count; ++i)
    free(c->blocks[i]);
  free(c);
}

static void create_cache_key(void) {
  have_cache_key = pthread_key_create(&cache_key, release) == 0;
}

/* The calling thread's cache; created on first use when `create`. */
static cache_t *thread_cache(int create) {
  pthread_once(&cache_key_once, create_cache_key);
  if (!have_cache_key)
    return NULL;
  cache_t *c = pthread_getspecific(cache_key);
  if (!c && create) {
    c = calloc(1, sizeof *c);
    if (c && pthread_setspecific(cache_key, c) != 0) {
      free(c);
      c = NULL;
    }
  }
  return c;
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
  if (size > SIZE_MAX - HEADER)
    return NULL;
  char *block = malloc(size + HEADER);
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
  cache_t *c = size >= CACHE_MIN_BYTES && size <= CACHE_BYTES
                   ? thread_cache(1)
                   : NULL;
  if (!c) {
    free(block);
    return;
  }
  /* Make room: the oldest blocks go first. */
  while (c->count > 0 &&
         (c->count == CACHE_SLOTS || c->bytes + size > CACHE_BYTES)) {
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
__attribute__((destructor)) static void forget_cache_key(void) {
  if (!have_cache_key)
    return;
  cache_t *c = pthread_getspecific(cache_key);
  if (c)
    release(c);
  pthread_key_delete(cache_key);
}
