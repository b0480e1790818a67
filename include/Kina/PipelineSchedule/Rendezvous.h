//===- Rendezvous.h - A schedule's transfers, proved free of deadlock -*- C++
//-*-===//
//
// Each rank's program: before each action, one step that sends what the
// previous action produced (a forward's activation to the next virtual
// stage's rank, a backward's cotangent to the previous one's), posts the
// receives of this action and of the next action going the other way (a
// forward's next backward, a backward's next forward: Megatron's batched
// p2p posts both directions too), and waits for the sends and for this
// action's receives; a receive posted early completes whenever its send
// comes. A last step sends what the last action produced.
//
// `checkRendezvous` runs those programs assuming the worst an MPI library
// may do: a send completes only once its receive is posted. If the ranks
// can still all finish, no buffering is needed for the schedule to run;
// otherwise the error names the cycle of ranks waiting for each other.
//
//===----------------------------------------------------------------------===//

#ifndef KINA_PIPELINESCHEDULE_RENDEZVOUS_H
#define KINA_PIPELINESCHEDULE_RENDEZVOUS_H

#include "Kina/PipelineSchedule/Schedule.h"

namespace mlir::kina::pipeline {

/// An activation or a cotangent going from one rank to another.
struct Message {
  Action producedBy; // on rank `from`
  int64_t from, to;

  bool operator==(const Message &other) const {
    return producedBy == other.producedBy && from == other.from &&
           to == other.to;
  }
};

/// One step of a rank's program: post `receives`, post and wait for
/// `sends`, wait for `awaits` (posted by this step or an earlier one),
/// then run `compute` (none in the final step).
struct ProgramStep {
  std::vector<Message> sends, receives, awaits;
  std::optional<Action> compute;
};

/// Each rank's program, in order.
std::vector<std::vector<ProgramStep>> lowerToPrograms(const Schedule &schedule);

/// "F3's activation" or "B3's cotangent".
std::string describeMessage(const Message &message, int64_t chunks);

/// Succeeds when the programs finish with every send blocking until its
/// receive is posted; otherwise names the cycle of waits.
llvm::Error checkRendezvous(const Schedule &schedule);

} // namespace mlir::kina::pipeline

#endif // KINA_PIPELINESCHEDULE_RENDEZVOUS_H
