/*===- ParallelFor.c - The thread pool compiled into every Kina .so -------===*
 *
 * Generated code hands each parallel loop to kina_parallel_for: the
 * calling thread and the pool's workers take chunks of the iteration space
 * until none is left. Every iteration writes its own part of the result, so
 * results are bit-identical whatever the thread count.
 *
 * Only libc (pthreads live in glibc's libc.so.6): a .so stays loadable from
 * any process, next to whatever OpenMP or BLAS threads that process runs.
 * Each .so has its own pool; a launch made while the pool is busy (calls
 * from several user threads) runs on the calling thread alone.
 *
 * Built to LLVM bitcode at Kina's build time and linked into every module
 * (lib/Target/SharedObject.cpp).
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "Device.h"

#define KINA_EXPORT __attribute__((visibility("default")))

/* `body(context, begin, end)` runs iterations [begin, end). */
typedef void (*kina_loop_body)(void *context, int64_t begin, int64_t end);

static struct {
  pthread_mutex_t launch; /* held by the one launch using the workers */
  pthread_mutex_t lock;   /* guards everything below */
  pthread_cond_t wake, done;
  pthread_t workers[KINA_MAX_THREADS];
  uint64_t born[KINA_MAX_THREADS]; /* the generation when each started */
  pid_t owner;                     /* the process the workers belong to */
  int started;                     /* workers running */
  int requested; /* threads per launch, the caller included; 0: default */
  int stopping;
  int cores;           /* usable cores, once known */
  int spin;            /* threads <= cores: waiters may spin first */
  uint64_t generation; /* bumped once per launch */
  int helpers;         /* workers taking part in the current launch */
  uint64_t busy;       /* of those, still working */
  /* The current launch. */
  kina_loop_body body;
  void *context;
  int64_t iterations, chunk;
  int64_t next; /* first iteration not yet taken (atomic) */
} pool = {.launch = PTHREAD_MUTEX_INITIALIZER,
          .lock = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static int available_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? (int)online : 1;
}

static int clamp_threads(long n) {
  return n < 1 ? 1 : n > KINA_MAX_THREADS ? KINA_MAX_THREADS : (int)n;
}

/* KINA_NUM_THREADS when set to a positive number, else every usable core. */
static int default_threads(void) {
  const char *env = getenv("KINA_NUM_THREADS");
  if (env && *env) {
    char *end;
    long n = strtol(env, &end, 10);
    if (*end == '\0' && n > 0)
      return clamp_threads(n);
  }
  return clamp_threads(available_cores());
}

/* Takes chunks until the iteration space is exhausted. */
static void run_chunks(void) {
  for (;;) {
    int64_t begin =
        __atomic_fetch_add(&pool.next, pool.chunk, __ATOMIC_RELAXED);
    if (begin >= pool.iterations)
      return;
    int64_t end = begin + pool.chunk;
    pool.body(pool.context, begin,
              end < pool.iterations ? end : pool.iterations);
  }
}

/* Waiting for a launch, or for its end, spins a little before sleeping:
   waking a sleeping thread costs tens of microseconds, as much as a small
   parallel loop. Not when there are more threads than cores. */
#define SPIN_ROUNDS 4000

static void pause_briefly(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void spin_while_equal(const uint64_t *word, uint64_t value) {
  for (int i = 0; i < SPIN_ROUNDS && pool.spin &&
                  __atomic_load_n(word, __ATOMIC_ACQUIRE) == value &&
                  !__atomic_load_n(&pool.stopping, __ATOMIC_ACQUIRE);
       ++i)
    pause_briefly();
}

static void *worker_main(void *arg) {
  int index = (int)(intptr_t)arg;
  pthread_mutex_lock(&pool.lock);
  /* Not pool.generation: a launch may have begun since the start. */
  uint64_t seen = pool.born[index];
  for (;;) {
    if (pool.generation == seen && !pool.stopping) {
      pthread_mutex_unlock(&pool.lock);
      spin_while_equal(&pool.generation, seen);
      pthread_mutex_lock(&pool.lock);
    }
    while (pool.generation == seen && !pool.stopping)
      pthread_cond_wait(&pool.wake, &pool.lock);
    if (pool.stopping)
      break;
    seen = pool.generation;
    if (index >= pool.helpers)
      continue;
    pthread_mutex_unlock(&pool.lock);
    run_chunks();
    pthread_mutex_lock(&pool.lock);
    if (__atomic_sub_fetch(&pool.busy, 1, __ATOMIC_RELEASE) == 0)
      pthread_cond_signal(&pool.done);
  }
  pthread_mutex_unlock(&pool.lock);
  return NULL;
}

/* Starts workers up to `wanted`; returns how many run (pool.lock held). */
static int grow_pool(int wanted) {
  pool.owner = getpid();
  while (pool.started < wanted) {
    pool.born[pool.started] = pool.generation;
    if (pthread_create(&pool.workers[pool.started], NULL, worker_main,
                       (void *)(intptr_t)pool.started) != 0)
      break;
    ++pool.started;
  }
  return pool.started;
}

/* Threads per launch, the caller included (>= 1). */
KINA_EXPORT int32_t kina_get_num_threads(void) {
  int requested = __atomic_load_n(&pool.requested, __ATOMIC_RELAXED);
  if (requested > 0)
    return requested;
  requested = default_threads();
  __atomic_store_n(&pool.requested, requested, __ATOMIC_RELAXED);
  return requested;
}

/* Sets the threads per launch; n <= 0 restores the default
   (KINA_NUM_THREADS, else every usable core). */
KINA_EXPORT void kina_set_num_threads(int32_t n) {
  __atomic_store_n(&pool.requested, n > 0 ? clamp_threads(n) : 0,
                   __ATOMIC_RELAXED);
}

/* A forked child has none of its parent's workers, and the parent's locks
   may have been held at the fork. */
static void forget_parent_workers(void) {
  pthread_mutex_init(&pool.launch, NULL);
  pthread_mutex_init(&pool.lock, NULL);
  pthread_cond_init(&pool.wake, NULL);
  pthread_cond_init(&pool.done, NULL);
  pool.started = pool.helpers = pool.busy = 0;
  pool.owner = 0;
}

void kina_parallel_for(kina_loop_body body, void *context, int64_t iterations) {
  if (iterations <= 0)
    return;
  int threads = kina_get_num_threads();
  /* A device of an SPMD run uses its own share of the cores. */
  const struct kina_device *device = kina_current_device();
  if (device && device->threads < threads)
    threads = device->threads;
  if (pool.owner != 0 && pool.owner != getpid())
    forget_parent_workers();
  if (threads <= 1 || iterations == 1 ||
      pthread_mutex_trylock(&pool.launch) != 0) {
    body(context, 0, iterations);
    return;
  }
  pthread_mutex_lock(&pool.lock);
  int workers =
      pool.stopping
          ? 0
          : grow_pool((int)(iterations < threads ? iterations : threads) - 1);
  if (workers == 0) {
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&pool.launch);
    body(context, 0, iterations);
    return;
  }
  int participants = (workers < threads - 1 ? workers : threads - 1) + 1;
  if (participants > iterations)
    participants = (int)iterations;
  pool.body = body;
  pool.context = context;
  pool.iterations = iterations;
  /* About four chunks per thread: balance on a busy machine without
     splitting the iterations (cache tiles) finer than needed. */
  int64_t chunks = 4 * (int64_t)participants;
  pool.chunk = (iterations + chunks - 1) / chunks;
  pool.next = 0;
  pool.helpers = participants - 1;
  if (pool.cores == 0)
    pool.cores = available_cores();
  pool.spin = threads <= pool.cores;
  __atomic_store_n(&pool.busy, participants - 1, __ATOMIC_RELEASE);
  __atomic_store_n(&pool.generation, pool.generation + 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);

  run_chunks();

  for (int i = 0; i < SPIN_ROUNDS && pool.spin &&
                  __atomic_load_n(&pool.busy, __ATOMIC_ACQUIRE) != 0;
       ++i)
    pause_briefly();
  pthread_mutex_lock(&pool.lock);
  while (pool.busy > 0)
    pthread_cond_wait(&pool.done, &pool.lock);
  pthread_mutex_unlock(&pool.lock);
  pthread_mutex_unlock(&pool.launch);
}

/* Workers must be gone before dlclose unmaps their code. */
__attribute__((destructor)) static void stop_workers(void) {
  pthread_mutex_lock(&pool.lock);
  __atomic_store_n(&pool.stopping, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&pool.wake);
  int started = pool.started;
  pthread_mutex_unlock(&pool.lock);
  for (int i = 0; i < started; ++i)
    pthread_join(pool.workers[i], NULL);
  pool.started = 0;
}
