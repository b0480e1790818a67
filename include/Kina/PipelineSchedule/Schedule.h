//===- Schedule.h - Pipeline schedules as data ------------------*- C++ -*-===//
//
// A pipeline schedule is, per rank, the ordered list of what that rank
// computes: a forward (F), a backward (B+W together), or, for the
// zero-bubble schedules, an input gradient (B) and a weight gradient (W)
// apart, each for one microbatch of one of the rank's model chunks. The
// model is cut into `stages * chunks` virtual stages; chunk c of rank r is
// virtual stage c * stages + r (Megatron's interleaving; chunks = 1
// otherwise). Activations pass from a virtual stage to the next, their
// cotangents back.
//
// The generators below write GPipe, 1F1B, interleaved 1F1B and ZB-H1;
// `parseSchedule` reads a hand-written one in the same text `print`
// writes, so that a broken order can be checked (LogicalClock.h,
// Rendezvous.h) before anything runs.
//
//===----------------------------------------------------------------------===//

#ifndef KINA_PIPELINESCHEDULE_SCHEDULE_H
#define KINA_PIPELINESCHEDULE_SCHEDULE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::kina::pipeline {

/// What one action computes for its microbatch and chunk.
enum class Phase : uint8_t {
  Forward,        // F: keeps what the backward needs
  Backward,       // B+W: the input's cotangent and the weights' gradients
  InputGradient,  // B: the input's cotangent only (zero-bubble schedules)
  WeightGradient, // W: the weights' gradients, from what B kept
};

/// The letter `print` writes for a phase: F, BW, B or W.
llvm::StringRef phaseLetter(Phase phase);

struct Action {
  Phase phase;
  int64_t microbatch;
  int64_t chunk; // 0 .. chunks-1, on the rank that runs the action

  bool operator==(const Action &other) const {
    return phase == other.phase && microbatch == other.microbatch &&
           chunk == other.chunk;
  }
};

enum class ScheduleKind { GPipe, OneFOneB, Interleaved, ZeroBubbleH1, Custom };

/// "gpipe", "1f1b", "interleaved", "zb-h1" (and "custom" for a parsed one).
llvm::StringRef scheduleName(ScheduleKind kind);
/// The kind a name means; none for "custom" or an unknown name.
std::optional<ScheduleKind> parseScheduleKind(llvm::StringRef name);
/// The names of the generated kinds, for an error's list.
std::string listScheduleNames();

struct Schedule {
  ScheduleKind kind = ScheduleKind::Custom;
  int64_t stages = 1;       // ranks along the pipeline axis
  int64_t microbatches = 1; // per step
  int64_t chunks = 1;       // model chunks per rank (interleaving's v)
  std::vector<std::vector<Action>> ranks; // per rank, in order

  int64_t virtualStages() const { return stages * chunks; }
  int64_t virtualStage(int64_t rank, const Action &action) const {
    return action.chunk * stages + rank;
  }
  /// The rank that runs virtual stage `virtualStage`.
  int64_t rankOf(int64_t virtualStage) const { return virtualStage % stages; }
};

/// The schedule `kind` for `stages` ranks and `microbatches` microbatches;
/// `chunks` is interleaving's v (2 when 0 and kind is Interleaved; must be
/// 1 for the others). An error says which count does not fit.
llvm::Expected<Schedule> makeSchedule(ScheduleKind kind, int64_t stages,
                                      int64_t microbatches, int64_t chunks = 0);

/// Checks that every rank's actions are its own and that each (phase,
/// microbatch, virtual stage) a step needs is computed exactly once, with
/// B and W either both split or both together per microbatch and stage.
llvm::Error verifySchedule(const Schedule &schedule);

/// "F3" (chunks = 1) or "F3/1" (microbatch 3 of chunk 1).
std::string describeAction(const Action &action, int64_t chunks);

/// schedule <name> stages=S microbatches=M chunks=V
/// rank 0: F0 F1 B0 ...
void printSchedule(const Schedule &schedule, llvm::raw_ostream &os);
/// Reads what printSchedule writes (kind Custom unless the header names a
/// generated one) and verifies it; errors give the line.
llvm::Expected<Schedule> parseSchedule(llvm::StringRef text);

/// The ranks of the cycle reached by following `waitsFor` (the rank a
/// blocked rank waits for) from `start`, in the order they wait; every
/// rank followed must be blocked, so that a cycle is reached.
std::vector<int64_t> waitCycle(int64_t start,
                               llvm::function_ref<int64_t(int64_t)> waitsFor);

/// Per rank, the most microbatch-chunks whose forward has run and whose
/// input gradient (B, or B+W) has not: the activations a rank holds.
std::vector<int64_t> peakInFlight(const Schedule &schedule);

} // namespace mlir::kina::pipeline

#endif // KINA_PIPELINESCHEDULE_SCHEDULE_H
