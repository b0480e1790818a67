/*===- ThreadSlot.c - A per-thread block of the runtime -------------------===*/

#include "ThreadSlot.h"

#include <stdlib.h>

void *kina_thread_slot_get(struct kina_thread_slot *slot, int create) {
  if (!__atomic_load_n(&slot->ready, __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock(&slot->lock);
    if (!slot->ready && pthread_key_create(&slot->key, slot->release) == 0)
      __atomic_store_n(&slot->ready, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&slot->lock);
    if (!slot->ready)
      return NULL;
  }
  void *block = pthread_getspecific(slot->key);
  if (!block && create) {
    block = calloc(1, slot->size);
    if (block && pthread_setspecific(slot->key, block) != 0) {
      free(block);
      block = NULL;
    }
  }
  return block;
}

void kina_thread_slot_forget(struct kina_thread_slot *slot) {
  if (!slot->ready)
    return;
  void *block = pthread_getspecific(slot->key);
  if (block)
    slot->release(block);
  pthread_key_delete(slot->key);
  slot->ready = 0;
}
