//===- LogicalClock.h - A schedule's timeline in unit costs -----*- C++ -*-===//
//
// Runs a schedule on a logical clock: each rank runs its actions in order,
// each as soon as the rank is free and what it needs is done (the
// previous virtual stage's forward, the next one's input gradient, its own
// forward or B). Transfers take `transfer` time units (0: free). With
// F = B = W = 1 (a B+W backward costs 2), a rank's idle fraction is
// exactly its bubble: GPipe and 1F1B (p-1)/(M+p-1), interleaved
// (p-1)/(vM+p-1), ZB-H1 (p-1)/(3M+p-1).
//
// A rank that waits for an action that waits, through other ranks, for
// that rank's own later action never runs: the clock returns an error
// naming that cycle.
//
//===----------------------------------------------------------------------===//

#ifndef KINA_PIPELINESCHEDULE_LOGICALCLOCK_H
#define KINA_PIPELINESCHEDULE_LOGICALCLOCK_H

#include "Kina/PipelineSchedule/Schedule.h"

#include <array>

namespace mlir::kina::pipeline {

/// What each phase costs on the clock; a B+W backward costs B + W.
struct PhaseCosts {
  double forward = 1;
  double inputGradient = 1;
  double weightGradient = 1;
  double transfer = 0; // an activation or a cotangent between ranks
  /// Per virtual stage, its own forward, input-gradient and
  /// weight-gradient costs (measured stages differ); empty: every stage
  /// costs the three above.
  std::vector<std::array<double, 3>> stages;

  /// What `phase` costs on virtual stage `stage`.
  double of(Phase phase, int64_t stage) const;
};

struct Timeline {
  struct Interval {
    Action action;
    double start, end;
  };
  std::vector<std::vector<Interval>> ranks; // in each rank's order
  double makespan = 0;                      // the last end, over ranks

  /// The time rank `rank` computes.
  double busy(int64_t rank) const;
  /// 1 - busy / makespan: the rank's share of the step spent waiting.
  double idleFraction(int64_t rank) const;
};

/// The schedule's timeline under `costs`, or the cycle that stops it.
llvm::Expected<Timeline> runLogicalClock(const Schedule &schedule,
                                         const PhaseCosts &costs = {});

} // namespace mlir::kina::pipeline

#endif // KINA_PIPELINESCHEDULE_LOGICALCLOCK_H
