//===- Simulator.cpp - The threaded backend of kina_device ----------------===//
//
// Every collective is an exchange, an all-to-all or a point-to-point
// send_recv (ABI.h, all devices of a permute at once): all devices
// of the run post their send buffer, the last to arrive checks that each
// group agrees on the kind and the size, every device copies its group's
// blocks, and a second barrier keeps the send buffers alive until all
// copies are done. All devices of
// an SPMD program reach the same collectives in the same order, so one
// barrier over the whole mesh serves groups of any mesh axis.
//
// A failure (sizes that disagree, a device that does not arrive within
// the timeout) is sticky and seen by all: nobody waits on it again.
//
//===----------------------------------------------------------------------===//

#include "Kina/Loader/Simulator.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

using namespace mlir::kina;

namespace {

/// How long a device at a barrier polls for the last one before it sleeps.
constexpr std::chrono::microseconds kPollBeforeSleeping{200};

class ThreadMesh {
public:
  ThreadMesh(int devices, std::chrono::milliseconds timeout)
      : devices(devices), timeout(timeout), posts(devices) {}

  static int32_t exchange(const kina_device *device, const void *send,
                          void *recv, int64_t rows, int64_t bytes,
                          int32_t groupSize, int64_t groupStride);
  static int32_t agree(const kina_device *device, int32_t status);
  static int32_t allToAll(const kina_device *device, const void *send,
                          void *recv, int64_t bytes, int32_t groupSize,
                          int64_t groupStride);
  static int32_t sendRecv(const kina_device *device, const void *send,
                          int32_t to, void *recv, int32_t from, int64_t bytes,
                          int32_t groupSize, int64_t groupStride);

  /// Device `rank`'s view of the run.
  kina_device device(int rank, int threads) {
    return kina_device{rank,
                       devices,
                       threads,
                       this,
                       &ThreadMesh::exchange,
                       &ThreadMesh::agree,
                       &ThreadMesh::allToAll,
                       &ThreadMesh::sendRecv};
  }

  std::atomic<int64_t> bytesMoved{0};
  std::atomic<int64_t> collectiveNanoseconds{0};

  std::string error() {
    std::lock_guard<std::mutex> lock(mutex);
    return failure;
  }

private:
  enum class Kind { Exchange, AllToAll, SendRecv };
  struct Post {
    Kind kind;
    const void *send; // null: in place, the member's block of `recv`
    const void *recv;
    int64_t rows, bytes;
    int64_t groupSize, groupStride;
    int32_t to = -1, from = -1; // SendRecv's coordinates, -1 for none

    /// The bytes this device sends.
    int64_t sent() const {
      if (kind == Kind::SendRecv)
        return to >= 0 ? bytes : 0;
      return rows * bytes * (groupSize - 1);
    }
  };

  /// Posts `post` for device `rank`, then (once every device has posted)
  /// fills its `recv` from its group's posts. `counted`: data of the
  /// program (not the run's own status).
  int32_t collective(int rank, const Post &post, bool counted);
  /// Copies device `rank`'s blocks from the members of its group.
  void receive(int rank, const Post &post) const;
  /// Waits until every device has arrived; the last one runs `complete`.
  /// False when the run has failed.
  template <typename Complete>
  bool barrier(std::unique_lock<std::mutex> &lock, Complete complete);
  void fail(std::string why) {
    if (failure.empty())
      failure = std::move(why);
    failed = true;
    wake.notify_all();
  }
  std::string checkGroups() const;

  const int devices;
  const std::chrono::milliseconds timeout;
  std::mutex mutex;
  std::condition_variable wake;
  int arrived = 0;
  // Written under `mutex`; read without it by devices polling at a
  // barrier.
  std::atomic<uint64_t> generation{0};
  bool failed = false;
  std::string failure;
  std::vector<Post> posts;
};

template <typename Complete>
bool ThreadMesh::barrier(std::unique_lock<std::mutex> &lock,
                         Complete complete) {
  uint64_t mine = generation;
  if (++arrived == devices) {
    complete();
    arrived = 0;
    ++generation;
    wake.notify_all();
    return !failed;
  }
  // The others are usually close behind (the devices run the same
  // program): poll a little before sleeping, since waking a sleeping
  // thread costs more than the wait (an interrupt to its core; in a
  // virtual machine, one to its host).
  lock.unlock();
  auto pollUntil = std::chrono::steady_clock::now() + kPollBeforeSleeping;
  while (generation.load(std::memory_order_acquire) == mine &&
         std::chrono::steady_clock::now() < pollUntil)
    std::this_thread::yield();
  lock.lock();
  // Even after a failure, wait for the others: they may still be reading
  // this device's send buffer. Only the timeout gives up on them.
  if (!wake.wait_for(lock, timeout, [&] { return generation != mine; })) {
    fail("a device did not reach a collective within " +
         std::to_string(timeout.count()) + " ms");
    return false;
  }
  return !failed;
}

std::string ThreadMesh::checkGroups() const {
  for (int rank = 0; rank < devices; ++rank) {
    const Post &post = posts[rank];
    if (post.groupSize < 1 || post.groupStride < 1 ||
        post.groupSize * post.groupStride > devices)
      return "device " + std::to_string(rank) + " names a group of " +
             std::to_string(post.groupSize) + " devices " +
             std::to_string(post.groupStride) + " apart on a mesh of " +
             std::to_string(devices);
    int64_t coordinate = (rank / post.groupStride) % post.groupSize;
    for (int64_t j = 0; j < post.groupSize; ++j) {
      const Post &other =
          posts[rank + (j - coordinate) * post.groupStride];
      if (other.kind != post.kind || other.rows != post.rows ||
          other.bytes != post.bytes || other.groupSize != post.groupSize ||
          other.groupStride != post.groupStride)
        return "devices " + std::to_string(rank) + " and " +
               std::to_string(rank + (j - coordinate) * post.groupStride) +
               " disagree on a collective (" +
               std::to_string(post.rows * post.bytes) + " vs " +
               std::to_string(other.rows * other.bytes) + " bytes)";
    }
    if (post.kind != Kind::SendRecv)
      continue;
    // Each device's target names it as its source, and back.
    auto member = [&](int32_t c) -> const Post & {
      return posts[rank + (c - coordinate) * post.groupStride];
    };
    bool inRange = post.to >= -1 && post.to < post.groupSize &&
                   post.from >= -1 && post.from < post.groupSize;
    if (!inRange || (post.to >= 0 && member(post.to).from != coordinate) ||
        (post.from >= 0 && member(post.from).to != coordinate))
      return "device " + std::to_string(rank) + " sends to coordinate " +
             std::to_string(post.to) + " and receives from " +
             std::to_string(post.from) + ", which its partners do not match";
  }
  return "";
}

void ThreadMesh::receive(int rank, const Post &post) const {
  int64_t bytes = post.bytes, groupSize = post.groupSize;
  int64_t coordinate = (rank / post.groupStride) % groupSize;
  for (int64_t j = 0; j < groupSize; ++j) {
    const Post &member = posts[rank + (j - coordinate) * post.groupStride];
    if (post.kind == Kind::SendRecv) {
      if (j == post.from)
        std::memcpy(const_cast<void *>(post.recv), member.send, size_t(bytes));
      continue;
    }
    char *to = static_cast<char *>(const_cast<void *>(post.recv)) + j * bytes;
    if (post.kind == Kind::AllToAll) {
      // Member j's block for this device (its own stays in its send).
      if (j != coordinate)
        std::memcpy(to,
                    static_cast<const char *>(member.send) + coordinate * bytes,
                    size_t(bytes));
      continue;
    }
    if (!member.send && j == coordinate)
      continue; // this device's own block, already in place
    // Member j's row r: its send's, or (in place) its recv's block j.
    const char *from = static_cast<const char *>(member.send);
    int64_t fromRow = bytes;
    if (!from) {
      from = static_cast<const char *>(member.recv) + j * bytes;
      fromRow = groupSize * bytes;
    }
    for (int64_t row = 0; row < post.rows; ++row)
      std::memcpy(to + row * groupSize * bytes, from + row * fromRow,
                  size_t(bytes));
  }
}

int32_t ThreadMesh::collective(int rank, const Post &post, bool counted) {
  auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex);
  if (failed)
    return KINA_STATUS_COLLECTIVE_FAILED;
  posts[rank] = post;
  bool ok = barrier(lock, [&] {
    if (std::string why = checkGroups(); !why.empty())
      fail(why);
  });
  if (ok) {
    lock.unlock();
    receive(rank, post);
    if (counted)
      bytesMoved += post.sent();
    lock.lock();
    ok = barrier(lock, [] {});
  }
  if (counted)
    collectiveNanoseconds += std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count();
  return ok ? KINA_STATUS_OK : KINA_STATUS_COLLECTIVE_FAILED;
}

int32_t ThreadMesh::exchange(const kina_device *device, const void *send,
                             void *recv, int64_t rows, int64_t bytes,
                             int32_t groupSize, int64_t groupStride) {
  auto *mesh = static_cast<ThreadMesh *>(device->context);
  return mesh->collective(
      device->rank,
      {Kind::Exchange, send, recv, rows, bytes, groupSize, groupStride},
      /*counted=*/true);
}

int32_t ThreadMesh::allToAll(const kina_device *device, const void *send,
                             void *recv, int64_t bytes, int32_t groupSize,
                             int64_t groupStride) {
  auto *mesh = static_cast<ThreadMesh *>(device->context);
  return mesh->collective(
      device->rank,
      {Kind::AllToAll, send, recv, 1, bytes, groupSize, groupStride},
      /*counted=*/true);
}

int32_t ThreadMesh::sendRecv(const kina_device *device, const void *send,
                             int32_t to, void *recv, int32_t from,
                             int64_t bytes, int32_t groupSize,
                             int64_t groupStride) {
  auto *mesh = static_cast<ThreadMesh *>(device->context);
  return mesh->collective(
      device->rank,
      {Kind::SendRecv, send, recv, 1, bytes, groupSize, groupStride, to, from},
      /*counted=*/true);
}

int32_t ThreadMesh::agree(const kina_device *device, int32_t status) {
  auto *mesh = static_cast<ThreadMesh *>(device->context);
  std::vector<int32_t> all(size_t(device->size));
  if (mesh->collective(device->rank,
                       {Kind::Exchange, &status, all.data(), 1, sizeof status,
                        device->size, 1},
                       /*counted=*/false) != KINA_STATUS_OK)
    return KINA_STATUS_COLLECTIVE_FAILED;
  return *std::max_element(all.begin(), all.end());
}

/// The threads devices run on, kept across runs: each keeps the runtime's
/// per-thread cache of temporaries (lib/Runtime/Workspace.c) warm, as a
/// real device keeps its memory. Grows so that every job of a run has a
/// thread of its own (the devices of a run wait on each other).
class DeviceThreads {
public:
  void run(std::vector<std::function<void()>> jobs) {
    std::unique_lock<std::mutex> lock(mutex);
    size_t remaining = jobs.size();
    std::condition_variable finished;
    for (auto &job : jobs)
      queue.push_back([&, job = std::move(job)] {
        job();
        std::lock_guard<std::mutex> guard(mutex);
        if (--remaining == 0)
          finished.notify_all();
      });
    while (idle < queue.size()) {
      threads.emplace_back([this] { work(); });
      ++idle;
    }
    wake.notify_all();
    finished.wait(lock, [&] { return remaining == 0; });
  }

  ~DeviceThreads() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread &thread : threads)
      thread.join();
  }

private:
  void work() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return; // stopping
      std::function<void()> job = std::move(queue.front());
      queue.pop_front();
      --idle;
      lock.unlock();
      job();
      lock.lock();
      ++idle;
    }
  }

  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::function<void()>> queue;
  std::vector<std::thread> threads;
  size_t idle = 0;
  bool stopping = false;
};

} // namespace

SimulationResult
mlir::kina::simulate(PackedEntry entry,
                     const std::vector<std::vector<void *>> &args,
                     const SimulationOptions &options) {
  int devices = int(args.size());
  ThreadMesh mesh(devices, options.timeout);
  std::vector<kina_device> handles;
  for (int d = 0; d < devices; ++d)
    handles.push_back(mesh.device(d, std::max(1, options.threadsPerDevice)));
  SimulationResult result;
  result.status.assign(devices, KINA_STATUS_COLLECTIVE_FAILED);
  std::vector<std::function<void()>> jobs;
  for (int d = 0; d < devices; ++d)
    jobs.push_back([&, d] {
      std::vector<void *> pointers = {&handles[d]};
      pointers.insert(pointers.end(), args[d].begin(), args[d].end());
      result.status[d] = entry(pointers.data());
    });
  static DeviceThreads threads;
  threads.run(std::move(jobs));
  result.bytesMoved = mesh.bytesMoved;
  result.collectiveSeconds = double(mesh.collectiveNanoseconds) * 1e-9;
  result.error = mesh.error();
  return result;
}
