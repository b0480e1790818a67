//===- Passes.td - Kina's automatic sharding pass ----------*- tablegen -*-===//
#ifndef KINA_AUTOSHARD_PASSES_TD
#define KINA_AUTOSHARD_PASSES_TD

include "mlir/Pass/PassBase.td"

def AutoShardPass : Pass<"kina-auto-shard", "::mlir::ModuleOp"> {
  let summary = "Place every value of a function by solving for the cheapest plan";
  let description = [{
    For each function with `@auto` parameters or results: its calls are
    inlined (the callees as written), and every parameter, intermediate and result gets the placement of the
    cheapest plan in the space of every op's strategies (each map of its
    splittable factors to the mesh axes, or replicated), solved as a
    mixed-integer program by CBC; placements the program writes are pins.
    The plan is written into the IR with the collectives it needs, and the
    function is marked `kina.auto_sharded`, which the propagation leaves as
    it is. A remark says the objective, CBC's bound and gap, the bytes each
    device sends, the peak and each parameter's placement. A function with
    `@auto` placements that another calls is placed on its own too (it is
    public), and where it is called, as part of its caller's plan.

    `objective=time` (the default) minimizes the predicted seconds: per op
    the larger of its FLOPs over `flops-per-second` and its blocks' bytes
    over `memory-bytes-per-second`, plus per collective
    `collective-latency` + bytes / `collective-bytes-per-second`;
    `objective=bytes` the bytes each device sends. `budget=` bounds the
    bytes a device holds at every program point (0: none).
    `enumerate=N` also enumerates every plan of the space when there are
    at most N and says the best objective, a check of the solver.
    `alternatives=K` finds the next K plans (each differs from the best
    and the ones before in at least one parameter's placement);
    `explain=w1,w2` prices the best plan with each other placement of
    those parameters pinned; the remark says each one's delta.
    `tie-layers=false` gives every op of repeated layers its own decision
    (by default a run of ops repeated at least twice shares one).
  }];
  let options = [
    Option<"objective", "objective", "std::string", "\"time\"",
           "time or bytes">,
    Option<"budget", "budget", "int64_t", "0",
           "bytes a device may hold at any point (0: no budget)">,
    Option<"enumerateUpTo", "enumerate", "int64_t", "0",
           "enumerate every plan when there are at most this many">,
    Option<"alternatives", "alternatives", "int64_t", "0",
           "the next plans to find, each differing in a parameter's "
           "placement">,
    ListOption<"explain", "explain", "std::string",
               "parameters whose other placements to price ('why not')">,
    Option<"flopsPerSecond", "flops-per-second", "double",
           "::mlir::kina::MachineModel::kDefaultFlopsPerSecond",
           "the FLOP rate of one device">,
    Option<"memoryBytesPerSecond", "memory-bytes-per-second", "double",
           "::mlir::kina::MachineModel::kDefaultMemoryBytesPerSecond",
           "one device's memory bandwidth">,
    Option<"collectiveLatency", "collective-latency", "double",
           "::mlir::kina::MachineModel::kDefaultCollectiveLatency",
           "seconds per collective">,
    Option<"collectiveBytesPerSecond", "collective-bytes-per-second",
           "double",
           "::mlir::kina::MachineModel::kDefaultCollectiveBytesPerSecond",
           "bytes per second a device sends in a collective">,
    Option<"secondsLimit", "seconds-limit", "double", "60",
           "stop the solver after this many seconds">,
    Option<"tieLayers", "tie-layers", "bool", "true",
           "repeated layers share their decisions">
  ];
  let dependentDialects = ["::mlir::kina::KinaDialect"];
}

#endif // KINA_AUTOSHARD_PASSES_TD
