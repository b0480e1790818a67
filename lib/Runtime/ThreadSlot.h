/*===- ThreadSlot.h - A per-thread block of the runtime ---------*- C -*-===*
 *
 * Each thread's block of some runtime state (the device it runs, its cache
 * of temporaries), zeroed when first asked for, freed by `release` when the
 * thread exits. On a pthread key, not __thread: TLS would make the .so
 * need ld-linux's __tls_get_addr. A slot is dropped when the .so is
 * unloaded (kina_thread_slot_forget from a destructor), so that no exiting
 * thread calls into unmapped code.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KINA_LIB_RUNTIME_THREADSLOT_H
#define KINA_LIB_RUNTIME_THREADSLOT_H

#include <pthread.h>
#include <stddef.h>

struct kina_thread_slot {
  pthread_mutex_t lock; /* guards the key's creation */
  pthread_key_t key;
  int ready;            /* the key exists */
  size_t size;          /* bytes of a thread's block */
  void (*release)(void *block);
};

#define KINA_THREAD_SLOT(SIZE, RELEASE)                                        \
  { PTHREAD_MUTEX_INITIALIZER, 0, 0, (SIZE), (RELEASE) }

/* The calling thread's block; NULL when it has none and `create` is 0, or
   when it cannot be made (then callers degrade: no cache, or a failure). */
void *kina_thread_slot_get(struct kina_thread_slot *slot, int create);

/* Releases the calling thread's block and drops the key. */
void kina_thread_slot_forget(struct kina_thread_slot *slot);

#endif /* KINA_LIB_RUNTIME_THREADSLOT_H */
