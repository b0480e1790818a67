/*===- KinaMPI.c - The MPI backend of struct kina_device ------------------===*
 *
 * One MPI rank is one device: rank r of MPI_COMM_WORLD is device r of the
 * mesh (or, after kina_mpi_split_mesh(n), rank r is device r % n of the
 * mesh of ranks n (r / n) ... n (r / n) + n - 1: a pipeline stage's group). A
 *collective over a mesh axis runs as MPI_Allgather (or MPI_Alltoall) on the
 *communicator of its group (split from the world once per axis and cached), a
 *permute as MPI_Sendrecv between two ranks of the world; the reductions
 *themselves are the runtime's, in group order, so every rank gets the bits the
 *threaded simulator gets.
 *
 * A library of its own, built against Debian's OpenMPI (its own mpi.h): a
 * generated .so never links MPI. The Python launcher (kina.mpi) loads it.
 *
 *===----------------------------------------------------------------------===*/

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#include "Kina/ABI/ABI.h"

#define KINA_MPI_EXPORT __attribute__((visibility("default")))

/* One communicator per mesh axis: (group size, stride) identifies it. */
#define MAX_GROUPS 16

static struct {
  struct kina_device device;
  MPI_Comm mesh; /* the devices' communicator: the world, or a group */
  int world_rank, world_size;
  struct {
    int32_t size;
    int64_t stride;
    MPI_Comm comm;
  } groups[MAX_GROUPS];
  int num_groups;
  int64_t bytes_moved;
  double collective_seconds;
} run;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void report(const char *what, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  fprintf(stderr, "kina mpi rank %d: %s failed: %.*s\n", run.world_rank, what,
          length, text);
}

/* `comm` split by `color`, this rank at `key` in its part; MPI_COMM_NULL
   (reported) on failure. */
static MPI_Comm split(MPI_Comm comm, int color, int key) {
  MPI_Comm part;
  int code = MPI_Comm_split(comm, color, key, &part);
  if (code == MPI_SUCCESS)
    return part;
  report("MPI_Comm_split", code);
  return MPI_COMM_NULL;
}

/* The communicator of this rank's group; MPI_COMM_NULL on failure. Every
   rank reaches the same collectives in the same order, so every rank
   splits for the same new group at the same time. */
static MPI_Comm group_comm(int32_t size, int64_t stride) {
  if (size == run.device.size && stride == 1)
    return run.mesh;
  for (int i = 0; i < run.num_groups; ++i)
    if (run.groups[i].size == size && run.groups[i].stride == stride)
      return run.groups[i].comm;
  if (run.num_groups == MAX_GROUPS)
    return MPI_COMM_NULL;
  int64_t coordinate = (run.device.rank / stride) % size;
  int first = (int)(run.device.rank - coordinate * stride);
  MPI_Comm comm = split(run.mesh, first, (int)coordinate);
  if (comm == MPI_COMM_NULL)
    return MPI_COMM_NULL;
  run.groups[run.num_groups].size = size;
  run.groups[run.num_groups].stride = stride;
  run.groups[run.num_groups].comm = comm;
  ++run.num_groups;
  return comm;
}

/* A member's rows as they land in recv: `rows` runs of `bytes`, one
   member's blocks apart, its extent one block so that member j's rows
   start j blocks in. */
static int interleaved_rows(int64_t rows, int64_t bytes, int32_t size,
                            MPI_Datatype *type) {
  MPI_Datatype spaced;
  if (MPI_Type_vector((int)rows, (int)bytes, (int)(bytes * size), MPI_BYTE,
                      &spaced) != MPI_SUCCESS)
    return 0;
  int ok = MPI_Type_create_resized(spaced, 0, (MPI_Aint)bytes, type) ==
               MPI_SUCCESS &&
           MPI_Type_commit(type) == MPI_SUCCESS;
  MPI_Type_free(&spaced);
  return ok;
}

static int32_t gather(const void *send, void *recv, int64_t rows,
                      int64_t bytes, int32_t size, int64_t stride) {
  if (rows < 1 || bytes > INT_MAX || rows * bytes > INT_MAX ||
      bytes * size > INT_MAX || size < 1 || stride < 1 ||
      size * stride > run.device.size)
    return KINA_STATUS_COLLECTIVE_FAILED;
  MPI_Comm comm = group_comm(size, stride);
  if (comm == MPI_COMM_NULL)
    return KINA_STATUS_COLLECTIVE_FAILED;
  MPI_Datatype member = MPI_BYTE;
  int count = (int)bytes;
  if (rows > 1) {
    if (!interleaved_rows(rows, bytes, size, &member))
      return KINA_STATUS_COLLECTIVE_FAILED;
    count = 1;
  }
  int code = send ? MPI_Allgather(send, (int)(rows * bytes), MPI_BYTE, recv,
                                  count, member, comm)
                  : MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv,
                                  count, member, comm);
  if (rows > 1)
    MPI_Type_free(&member);
  if (code != MPI_SUCCESS) {
    report("MPI_Allgather", code);
    return KINA_STATUS_COLLECTIVE_FAILED;
  }
  return KINA_STATUS_OK;
}

static int32_t scatter(const void *send, void *recv, int64_t bytes,
                       int32_t size, int64_t stride) {
  if (bytes < 0 || size < 1 || size > KINA_MAX_MESH_DEVICES ||
      bytes * size > INT_MAX || stride < 1 || size * stride > run.device.size)
    return KINA_STATUS_COLLECTIVE_FAILED;
  MPI_Comm comm = group_comm(size, stride);
  if (comm == MPI_COMM_NULL)
    return KINA_STATUS_COLLECTIVE_FAILED;
  /* No block to or from this rank itself (MPI_Alltoall would copy it). */
  int counts[KINA_MAX_MESH_DEVICES], offsets[KINA_MAX_MESH_DEVICES];
  int self = (int)((run.device.rank / stride) % size);
  for (int32_t j = 0; j < size; ++j) {
    counts[j] = j == self ? 0 : (int)bytes;
    offsets[j] = (int)(j * bytes);
  }
  int code = MPI_Alltoallv(send, counts, offsets, MPI_BYTE, recv, counts,
                           offsets, MPI_BYTE, comm);
  if (code != MPI_SUCCESS) {
    report("MPI_Alltoallv", code);
    return KINA_STATUS_COLLECTIVE_FAILED;
  }
  return KINA_STATUS_OK;
}

/* Counts a collective's time and the `moved` bytes this rank sent. A
   rank whose collective failed cannot tell which of the others are still
   in it: the whole job ends, with the reason on stderr. */
static int32_t counted(int32_t status, double start, int64_t moved,
                       int64_t block, int32_t size, int64_t stride) {
  if (status != KINA_STATUS_OK) {
    fprintf(stderr,
            "kina mpi rank %d: a collective over %d ranks %lld apart "
            "(%lld bytes each) failed; aborting the job\n",
            run.world_rank, size, (long long)stride, (long long)block);
    MPI_Abort(MPI_COMM_WORLD, KINA_STATUS_COLLECTIVE_FAILED);
  }
  run.collective_seconds += now() - start;
  run.bytes_moved += moved;
  return status;
}

static int32_t exchange(const struct kina_device *device, const void *send,
                        void *recv, int64_t rows, int64_t bytes, int32_t size,
                        int64_t stride) {
  (void)device;
  double start = now();
  return counted(gather(send, recv, rows, bytes, size, stride), start,
                 rows * bytes * (size - 1), rows * bytes, size, stride);
}

static int32_t all_to_all(const struct kina_device *device, const void *send,
                          void *recv, int64_t bytes, int32_t size,
                          int64_t stride) {
  (void)device;
  double start = now();
  return counted(scatter(send, recv, bytes, size, stride), start,
                 bytes * (size - 1), bytes, size, stride);
}

/* The tag of the point-to-point transfers (no other messages share it). */
#define KINA_MPI_TAG_SEND_RECV 17

static int32_t point_to_point(const void *send, int32_t to, void *recv,
                              int32_t from, int64_t bytes, int32_t size,
                              int64_t stride) {
  if (bytes < 0 || bytes > INT_MAX || size < 1 || stride < 1 ||
      size * stride > run.device.size || to < -1 || to >= size || from < -1 ||
      from >= size)
    return KINA_STATUS_COLLECTIVE_FAILED;
  int64_t coordinate = (run.device.rank / stride) % size;
  int64_t first = run.device.rank - coordinate * stride;
  int dest = to < 0 ? MPI_PROC_NULL : (int)(first + to * stride);
  int source = from < 0 ? MPI_PROC_NULL : (int)(first + from * stride);
  char none = 0; /* a buffer for MPI_PROC_NULL's side */
  int code =
      MPI_Sendrecv(to < 0 ? &none : send, to < 0 ? 0 : (int)bytes, MPI_BYTE,
                   dest, KINA_MPI_TAG_SEND_RECV, from < 0 ? &none : recv,
                   from < 0 ? 0 : (int)bytes, MPI_BYTE, source,
                   KINA_MPI_TAG_SEND_RECV, run.mesh, MPI_STATUS_IGNORE);
  if (code != MPI_SUCCESS) {
    report("MPI_Sendrecv", code);
    return KINA_STATUS_COLLECTIVE_FAILED;
  }
  return KINA_STATUS_OK;
}

static int32_t send_recv(const struct kina_device *device, const void *send,
                         int32_t to, void *recv, int32_t from, int64_t bytes,
                         int32_t size, int64_t stride) {
  (void)device;
  double start = now();
  return counted(point_to_point(send, to, recv, from, bytes, size, stride),
                 start, to >= 0 ? bytes : 0, bytes, size, stride);
}

/* The largest `status` over the ranks of `comm`. */
static int32_t largest(MPI_Comm comm, int32_t status) {
  int32_t all = KINA_STATUS_COLLECTIVE_FAILED;
  int code = MPI_Allreduce(&status, &all, 1, MPI_INT32_T, MPI_MAX, comm);
  if (code != MPI_SUCCESS) {
    report("MPI_Allreduce", code);
    return KINA_STATUS_COLLECTIVE_FAILED;
  }
  return all;
}

static int32_t agree(const struct kina_device *device, int32_t status) {
  (void)device;
  return largest(run.mesh, status);
}

/* A pipeline's transfers (kina.pipelining): each send is synchronous
   (MPI_Issend completes only once its receive is matched), so a schedule
   runs only if it needs no buffering, as Rendezvous.h proves it does not.
   Requests live in a fixed table; a handle is its index. */
#define KINA_MPI_MAX_PENDING 256

static MPI_Request pending[KINA_MPI_MAX_PENDING];
static int64_t pending_bytes[KINA_MPI_MAX_PENDING]; /* sent; 0: a receive */

static int64_t free_slot(void) {
  for (int64_t i = 0; i < KINA_MPI_MAX_PENDING; ++i)
    if (pending[i] == MPI_REQUEST_NULL)
      return i;
  fprintf(stderr, "kina mpi rank %d: more than %d transfers pending\n",
          run.world_rank, KINA_MPI_MAX_PENDING);
  return -1;
}

static int valid_transfer(int64_t bytes, int32_t peer, int32_t tag) {
  int *upper = NULL, found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upper, &found);
  return bytes >= 0 && bytes <= INT_MAX && peer >= 0 && peer < run.world_size &&
         tag >= 0 && found && tag <= *upper;
}

/* Starts receiving `bytes` from world rank `from`: a handle, or -1. */
KINA_MPI_EXPORT int64_t kina_mpi_post_receive(void *recv, int64_t bytes,
                                              int32_t from, int32_t tag) {
  int64_t slot = valid_transfer(bytes, from, tag) ? free_slot() : -1;
  if (slot < 0)
    return -1;
  int code = MPI_Irecv(recv, (int)bytes, MPI_BYTE, from, tag, MPI_COMM_WORLD,
                       &pending[slot]);
  if (code != MPI_SUCCESS) {
    report("MPI_Irecv", code);
    return -1;
  }
  pending_bytes[slot] = 0;
  return slot;
}

/* Starts sending `bytes` to world rank `to`: a handle, or -1. */
KINA_MPI_EXPORT int64_t kina_mpi_post_send(const void *send, int64_t bytes,
                                           int32_t to, int32_t tag) {
  int64_t slot = valid_transfer(bytes, to, tag) ? free_slot() : -1;
  if (slot < 0)
    return -1;
  int code = MPI_Issend(send, (int)bytes, MPI_BYTE, to, tag, MPI_COMM_WORLD,
                        &pending[slot]);
  if (code != MPI_SUCCESS) {
    report("MPI_Issend", code);
    return -1;
  }
  pending_bytes[slot] = bytes;
  return slot;
}

/* Waits for a transfer; a completed send counts its bytes as moved. */
KINA_MPI_EXPORT int32_t kina_mpi_wait(int64_t handle) {
  if (handle < 0 || handle >= KINA_MPI_MAX_PENDING ||
      pending[handle] == MPI_REQUEST_NULL)
    return KINA_STATUS_COLLECTIVE_FAILED;
  double start = now();
  int code = MPI_Wait(&pending[handle], MPI_STATUS_IGNORE);
  run.collective_seconds += now() - start;
  if (code != MPI_SUCCESS) {
    report("MPI_Wait", code);
    return KINA_STATUS_COLLECTIVE_FAILED;
  }
  run.bytes_moved += pending_bytes[handle];
  return KINA_STATUS_OK;
}

/* Initializes MPI (once) and returns this rank's device, or NULL. Errors
   return to the caller instead of aborting inside MPI. */
KINA_MPI_EXPORT const struct kina_device *kina_mpi_open(int32_t threads) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(NULL, NULL) != MPI_SUCCESS)
    return NULL;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  run.device.rank = run.world_rank = rank;
  run.device.size = run.world_size = size;
  run.mesh = MPI_COMM_WORLD;
  run.device.threads = threads < 1 ? 1 : threads;
  run.device.context = &run;
  run.device.exchange = exchange;
  run.device.agree = agree;
  run.device.all_to_all = all_to_all;
  run.device.send_recv = send_recv;
  for (int i = 0; i < KINA_MPI_MAX_PENDING; ++i)
    pending[i] = MPI_REQUEST_NULL;
  return &run.device;
}

/* Makes this rank device r % devices of a mesh of its own: the world's
   ranks in consecutive groups of `devices` (a pipeline stage's tensor-
   parallel group), whose collectives stay within the group. Before any
   collective; 0, or -1 when the world does not divide. */
KINA_MPI_EXPORT int32_t kina_mpi_split_mesh(int32_t devices) {
  if (devices < 1 || run.world_size % devices || run.num_groups ||
      run.mesh != MPI_COMM_WORLD)
    return -1;
  MPI_Comm comm =
      split(MPI_COMM_WORLD, run.world_rank / devices, run.world_rank % devices);
  if (comm == MPI_COMM_NULL)
    return -1;
  run.mesh = comm;
  run.device.rank = run.world_rank % devices;
  run.device.size = devices;
  return 0;
}

/* All ranks' `bytes` from `send`, in world rank order, into `recv` (for
   the launcher: results and checks); not counted as data moved. */
KINA_MPI_EXPORT int32_t kina_mpi_allgather(const void *send, void *recv,
                                           int64_t bytes) {
  if (bytes < 0 || bytes > INT_MAX)
    return KINA_STATUS_COLLECTIVE_FAILED;
  int code = MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes,
                           MPI_BYTE, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) {
    report("MPI_Allgather", code);
    return KINA_STATUS_COLLECTIVE_FAILED;
  }
  return KINA_STATUS_OK;
}

/* The largest `status` over all ranks of the world. */
KINA_MPI_EXPORT int32_t kina_mpi_agree(int32_t status) {
  return largest(MPI_COMM_WORLD, status);
}

KINA_MPI_EXPORT int64_t kina_mpi_bytes_moved(void) { return run.bytes_moved; }

KINA_MPI_EXPORT double kina_mpi_collective_seconds(void) {
  return run.collective_seconds;
}

KINA_MPI_EXPORT void kina_mpi_reset_counters(void) {
  run.bytes_moved = 0;
  run.collective_seconds = 0;
}

/* Ends the whole job with `code`: no rank is left waiting. */
KINA_MPI_EXPORT void kina_mpi_abort(int32_t code) {
  MPI_Abort(MPI_COMM_WORLD, code);
}

KINA_MPI_EXPORT void kina_mpi_close(void) {
  for (int i = 0; i < run.num_groups; ++i)
    MPI_Comm_free(&run.groups[i].comm);
  run.num_groups = 0;
  if (run.mesh != MPI_COMM_WORLD)
    MPI_Comm_free(&run.mesh);
  run.mesh = MPI_COMM_WORLD;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}
