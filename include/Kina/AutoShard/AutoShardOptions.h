//===- AutoShardOptions.h - What automatic sharding is asked and says -*- C++ -*-===//
//
// Plain C++ (no MLIR), so that the compile driver's embedders (Python)
// pass the options and read the reports.
//
//===----------------------------------------------------------------------===//

#ifndef KINA_AUTOSHARD_AUTOSHARDOPTIONS_H
#define KINA_AUTOSHARD_AUTOSHARDOPTIONS_H

#include "Kina/Sharding/CostRecords.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir::kina {

/// The collectives that move data, in the order of MachineModel's table.
inline constexpr const char *kCollectiveKinds[] = {
    "all_gather", "all_reduce", "reduce_scatter", "all_to_all"};
inline constexpr int kNumCollectiveKinds = 4;

/// The machine the time objective models, as `python3 -m kina.calibrate`
/// measures it (Python passes the file's figures); the defaults are the
/// magnitudes of its DEFAULTS.
struct MachineModel {
  static constexpr double kDefaultFlopsPerSecond = 40e9;
  static constexpr double kDefaultMemoryBytesPerSecond = 10e9;
  static constexpr double kDefaultCollectiveLatency = 2e-5;
  static constexpr double kDefaultCollectiveBytesPerSecond = 2e9;
  double flopsPerSecond = kDefaultFlopsPerSecond;
  double memoryBytesPerSecond = kDefaultMemoryBytesPerSecond;
  /// Per collective kind (kCollectiveKinds): seconds = latency + bytes
  /// each device sends / bandwidth.
  struct Collective {
    double latency = kDefaultCollectiveLatency;
    double bytesPerSecond = kDefaultCollectiveBytesPerSecond;
  };
  Collective collectives[kNumCollectiveKinds];
};

struct AutoShardOptions {
  enum class Objective { Time, Bytes };
  Objective objective = Objective::Time;
  /// Bytes one device may hold at any program point; 0: no budget.
  int64_t budgetBytes = 0;
  MachineModel machine;
  /// Also enumerate every plan of the solver's space when there are at
  /// most this many, and say the best one's objective (a check of the
  /// solver; 0: never).
  int64_t enumerateUpTo = 0;
  /// The next plans to find after the best, each differing from it and
  /// from the earlier ones in at least one parameter's placement.
  int64_t alternatives = 0;
  /// Parameters to explain: the best plan with each of their other
  /// placements ("why not X").
  std::vector<std::string> explain;
  double secondsLimit = 60;
  /// Repeated layers share their decisions (docs/design.md, "Automatic
  /// sharding"): the space is the tied one.
  bool tieLayers = true;
};

/// What the solver found, for remarks and Python.
struct AutoShardReport {
  std::string function;
  double objective = 0; // nanoseconds (objective=time) or bytes
  double bound = 0;     // CBC's lower bound on the optimum
  bool bytesObjective = false;
  double gap = 0;
  bool optimal = false;
  double predictedSeconds = 0;
  int64_t bytesPerDevice = 0;
  int64_t peakBytes = 0;
  int64_t collectives = 0;
  int64_t nodes = 0, variables = 0, constraints = 0;
  /// The decisions once repeated layers are tied (nodes when untied).
  int64_t groups = 0;
  /// Each parameter's placement, by name, in parameter order.
  std::vector<std::pair<std::string, std::string>> parameters;
  /// A plan other than the best: its objective, its bytes sent per
  /// device, and each parameter's placement.
  struct Alternative {
    double objective = 0;
    int64_t bytesPerDevice = 0;
    std::vector<std::pair<std::string, std::string>> parameters;
  };
  std::vector<Alternative> alternatives;
  /// The best plan with `parameter` pinned at `placement`: feasible or
  /// not (the budget, a conversion), and the plan.
  struct WhyNot {
    std::string parameter, placement;
    bool feasible = false;
    Alternative plan;
  };
  std::vector<WhyNot> whyNot;
  /// The collectives the plan inserted, each with why (the remarks).
  std::vector<CollectiveRecord> inserted;
  /// With enumerateUpTo: the plans enumerated and the best objective.
  int64_t enumerated = 0;
  double enumeratedBest = 0;
};

/// The remark that says `report`.
std::string remarkText(const AutoShardReport &report);

} // namespace mlir::kina

#endif // KINA_AUTOSHARD_AUTOSHARDOPTIONS_H
