//===- Rendezvous.cpp - Programs of batched transfers, run unbuffered -----===//

#include "Kina/PipelineSchedule/Rendezvous.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir::kina::pipeline;

namespace {

/// The messages `action` on `rank` sends once it has run.
std::vector<Message> sentBy(const Schedule &schedule, int64_t rank,
                            const Action &action) {
  int64_t stage = schedule.virtualStage(rank, action);
  int64_t to = -1;
  if (action.phase == Phase::Forward && stage + 1 < schedule.virtualStages())
    to = schedule.rankOf(stage + 1);
  if ((action.phase == Phase::Backward ||
       action.phase == Phase::InputGradient) &&
      stage > 0)
    to = schedule.rankOf(stage - 1);
  if (to < 0 || to == rank)
    return {};
  return {Message{action, rank, to}};
}

} // namespace

std::vector<std::vector<ProgramStep>>
mlir::kina::pipeline::lowerToPrograms(const Schedule &schedule) {
  // Every message, indexed by its receiver, so each action finds what it
  // receives: the one message whose producer it depends on.
  std::vector<std::vector<Message>> inbox(schedule.stages);
  for (int64_t rank = 0; rank < schedule.stages; ++rank)
    for (const Action &action : schedule.ranks[rank])
      for (const Message &message : sentBy(schedule, rank, action))
        inbox[message.to].push_back(message);
  auto receivedBy = [&](int64_t rank, const Action &action) {
    int64_t stage = schedule.virtualStage(rank, action);
    std::vector<Message> received;
    for (const Message &message : inbox[rank]) {
      const Action &producer = message.producedBy;
      if (producer.microbatch != action.microbatch)
        continue;
      int64_t from = schedule.virtualStage(message.from, producer);
      bool activation = action.phase == Phase::Forward &&
                        producer.phase == Phase::Forward && from == stage - 1;
      bool cotangent = (action.phase == Phase::Backward ||
                        action.phase == Phase::InputGradient) &&
                       producer.phase != Phase::Forward && from == stage + 1;
      if (activation || cotangent)
        received.push_back(message);
    }
    return received;
  };

  auto isForward = [](const Action &action) {
    return action.phase == Phase::Forward;
  };
  std::vector<std::vector<ProgramStep>> programs(schedule.stages);
  for (int64_t rank = 0; rank < schedule.stages; ++rank) {
    const std::vector<Action> &actions = schedule.ranks[rank];
    std::vector<Message> pending; // sent by the previous action
    std::vector<Message> posted;  // receives posted so far
    auto post = [&](ProgramStep &step, const Action &action) {
      for (const Message &message : receivedBy(rank, action))
        if (!llvm::is_contained(posted, message)) {
          posted.push_back(message);
          step.receives.push_back(message);
        }
    };
    for (size_t k = 0; k < actions.size(); ++k) {
      ProgramStep step;
      step.sends = std::move(pending);
      step.awaits = receivedBy(rank, actions[k]);
      step.compute = actions[k];
      post(step, actions[k]);
      // The next action going the other way (a W receives nothing).
      for (size_t j = k + 1; j < actions.size(); ++j)
        if (isForward(actions[j]) != isForward(actions[k]) &&
            actions[j].phase != Phase::WeightGradient) {
          post(step, actions[j]);
          break;
        }
      programs[rank].push_back(std::move(step));
      pending = sentBy(schedule, rank, actions[k]);
    }
    if (!pending.empty())
      programs[rank].push_back({std::move(pending), {}, {}, std::nullopt});
  }
  return programs;
}

std::string mlir::kina::pipeline::describeMessage(const Message &message,
                                                  int64_t chunks) {
  return describeAction(message.producedBy, chunks) +
         (message.producedBy.phase == Phase::Forward ? "'s activation"
                                                     : "'s cotangent");
}

llvm::Error mlir::kina::pipeline::checkRendezvous(const Schedule &schedule) {
  if (llvm::Error failure = verifySchedule(schedule))
    return failure;
  std::vector<std::vector<ProgramStep>> programs = lowerToPrograms(schedule);
  int64_t ranks = schedule.stages;
  std::vector<size_t> at(ranks, 0);
  // Per rank: receives posted and not yet matched, receives matched, and
  // which of the current step's sends completed.
  std::vector<std::vector<Message>> posted(ranks), arrived(ranks);
  std::vector<std::vector<bool>> sent(ranks);
  auto finished = [&](int64_t rank) {
    return at[rank] == programs[rank].size();
  };
  auto enter = [&](int64_t rank) {
    if (finished(rank))
      return;
    const ProgramStep &step = programs[rank][at[rank]];
    llvm::append_range(posted[rank], step.receives);
    sent[rank].assign(step.sends.size(), false);
  };
  for (int64_t rank = 0; rank < ranks; ++rank)
    enter(rank);

  for (;;) {
    bool progressed = false;
    // A send completes once its receiver has posted the receive.
    for (int64_t rank = 0; rank < ranks; ++rank) {
      if (finished(rank))
        continue;
      const ProgramStep &step = programs[rank][at[rank]];
      for (size_t i = 0; i < step.sends.size(); ++i) {
        const Message &message = step.sends[i];
        auto match = llvm::find(posted[message.to], message);
        if (sent[rank][i] || match == posted[message.to].end())
          continue;
        posted[message.to].erase(match);
        arrived[message.to].push_back(message);
        sent[rank][i] = true;
        progressed = true;
      }
    }
    for (int64_t rank = 0; rank < ranks; ++rank) {
      if (finished(rank))
        continue;
      const ProgramStep &step = programs[rank][at[rank]];
      bool done = llvm::all_of(sent[rank], [](bool b) { return b; }) &&
                  llvm::all_of(step.awaits, [&](const Message &message) {
                    return llvm::is_contained(arrived[rank], message);
                  });
      if (done) {
        ++at[rank];
        enter(rank);
        progressed = true;
      }
    }
    if (llvm::all_of(llvm::seq<int64_t>(0, ranks), finished))
      return llvm::Error::success();
    if (!progressed)
      break;
  }

  // Every rank left waits on one peer: follow the waits to a cycle.
  auto waitOf = [&](int64_t rank) -> std::pair<int64_t, std::string> {
    const ProgramStep &step = programs[rank][at[rank]];
    std::string where =
        step.compute
            ? " before " + describeAction(*step.compute, schedule.chunks)
            : std::string(" at its end");
    for (size_t i = 0; i < step.sends.size(); ++i)
      if (!sent[rank][i])
        return {step.sends[i].to,
                llvm::formatv("rank {0} waits{1} to send {2} to rank {3}", rank,
                              where,
                              describeMessage(step.sends[i], schedule.chunks),
                              step.sends[i].to)};
    for (const Message &message : step.awaits)
      if (!llvm::is_contained(arrived[rank], message))
        return {message.from,
                llvm::formatv("rank {0} waits{1} to receive {2} from rank {3}",
                              rank, where,
                              describeMessage(message, schedule.chunks),
                              message.from)};
    llvm_unreachable("a rank left waits for a transfer");
  };
  int64_t first = 0;
  while (finished(first))
    ++first;
  std::vector<std::string> waits;
  for (int64_t rank :
       waitCycle(first, [&](int64_t r) { return waitOf(r).first; }))
    waits.push_back(waitOf(rank).second);
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "the schedule deadlocks when a send waits for its receive: " +
          llvm::join(waits, "; "));
}
