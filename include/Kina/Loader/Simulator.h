//===- Simulator.h - N devices on N threads of one process ------*- C++ -*-===//
//
// The threaded backend of the per-device exports (`kina_spmd_NAME`): one
// thread per device, collectives through shared memory. Part of
// KinaLoader: no compiler, no MPI.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_LOADER_SIMULATOR_H
#define KINA_LOADER_SIMULATOR_H

#include "Kina/Loader/SharedLibrary.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::kina {

struct SimulationResult {
  /// What each device's call returned (all equal: devices agree on it).
  std::vector<int32_t> status;
  /// Bytes all devices sent to others in collectives.
  int64_t bytesMoved = 0;
  /// Seconds spent inside collectives, summed over the devices.
  double collectiveSeconds = 0;
  /// Why a collective failed, when one did.
  std::string error;
};

struct SimulationOptions {
  int threadsPerDevice = 1;
  /// How long a device waits for the others in a collective before every
  /// device gives up with KINA_STATUS_COLLECTIVE_FAILED.
  std::chrono::milliseconds timeout{60000};
};

/// Runs the per-device entry `entry` once on each of `args.size()` devices
/// (the mesh's device count), each on its own thread; `args[d]` holds
/// device d's local inputs, then its local output buffer.
SimulationResult simulate(PackedEntry entry,
                          const std::vector<std::vector<void *>> &args,
                          const SimulationOptions &options = {});

} // namespace mlir::kina

#endif // KINA_LOADER_SIMULATOR_H
