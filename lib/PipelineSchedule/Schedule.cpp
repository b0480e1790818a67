//===- Schedule.cpp - The four schedules, their text and their checks -----===//
//
// Each generator follows its paper's order for one rank; the logical
// clock (LogicalClock.cpp) is what shows the bubble each one leaves.
//
//===----------------------------------------------------------------------===//

#include "Kina/PipelineSchedule/Schedule.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace mlir::kina::pipeline;

namespace {

struct NamedKind {
  ScheduleKind kind;
  llvm::StringRef name;
};
constexpr NamedKind kScheduleNames[] = {
    {ScheduleKind::GPipe, "gpipe"},
    {ScheduleKind::OneFOneB, "1f1b"},
    {ScheduleKind::Interleaved, "interleaved"},
    {ScheduleKind::ZeroBubbleH1, "zb-h1"},
};

/// Interleaving's chunk count when none is given (Megatron's usual v).
constexpr int64_t kDefaultInterleavedChunks = 2;
/// The most actions a generated schedule may hold (three per microbatch,
/// chunk and rank at most): past it, a count is a typo, not a pipeline.
constexpr int64_t kMaxActions = int64_t(1) << 24;

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

Action forward(int64_t microbatch, int64_t chunk = 0) {
  return {Phase::Forward, microbatch, chunk};
}
Action backward(int64_t microbatch, int64_t chunk = 0) {
  return {Phase::Backward, microbatch, chunk};
}

/// GPipe (Huang et al. 2019): every forward, then every backward.
std::vector<Action> gpipeRank(int64_t microbatches) {
  std::vector<Action> actions;
  for (int64_t m = 0; m < microbatches; ++m)
    actions.push_back(forward(m));
  for (int64_t m = 0; m < microbatches; ++m)
    actions.push_back(backward(m));
  return actions;
}

/// The forwards a rank runs before its first backward in 1F1B and ZB-H1:
/// enough to fill the stages after it.
int64_t warmupForwards(int64_t stages, int64_t rank, int64_t microbatches) {
  return std::min(stages - 1 - rank, microbatches);
}

/// 1F1B (PipeDream-Flush; Narayanan et al. 2021): a warm-up of forwards,
/// then one forward and one backward in turn, then the backwards left.
std::vector<Action> oneFOneBRank(int64_t stages, int64_t rank,
                                 int64_t microbatches) {
  int64_t warmup = warmupForwards(stages, rank, microbatches);
  std::vector<Action> actions;
  for (int64_t m = 0; m < warmup; ++m)
    actions.push_back(forward(m));
  for (int64_t m = 0; m < microbatches; ++m) {
    if (warmup + m < microbatches)
      actions.push_back(forward(warmup + m));
    actions.push_back(backward(m));
  }
  return actions;
}

/// ZB-H1 (Qi et al. 2024, arXiv 2401.10241): 1F1B with each backward
/// split into B and W, rank r running each W r backwards late, so that the
/// W's fill the bubbles that 1F1B's cool-down leaves; the same
/// activations in flight as 1F1B.
std::vector<Action> zeroBubbleH1Rank(int64_t stages, int64_t rank,
                                     int64_t microbatches) {
  std::vector<Action> actions;
  int64_t nextWeight = 0;
  for (const Action &action : oneFOneBRank(stages, rank, microbatches)) {
    if (action.phase == Phase::Forward) {
      actions.push_back(action);
      continue;
    }
    actions.push_back({Phase::InputGradient, action.microbatch, 0});
    if (action.microbatch >= rank)
      actions.push_back({Phase::WeightGradient, nextWeight++, 0});
  }
  while (nextWeight < microbatches)
    actions.push_back({Phase::WeightGradient, nextWeight++, 0});
  return actions;
}

/// Interleaved 1F1B (Narayanan et al. 2021, Megatron-LM's
/// forward_backward_pipelining_with_interleaving): the k-th forward of a
/// rank is microbatch (k / (S v)) S + k % S of chunk (k / S) % v, its k-th
/// backward the same microbatch of chunk v - 1 - (k / S) % v; the warm-up
/// is 2 (S - r - 1) + (v - 1) S forwards.
std::vector<Action> interleavedRank(int64_t stages, int64_t rank,
                                    int64_t microbatches, int64_t chunks) {
  int64_t total = microbatches * chunks;
  int64_t group = stages * chunks;
  auto microbatchOf = [&](int64_t k) {
    return (k / group) * stages + k % stages;
  };
  auto chunkOf = [&](int64_t k) { return (k % group) / stages; };
  int64_t warmup =
      std::min(2 * (stages - rank - 1) + (chunks - 1) * stages, total);
  std::vector<Action> actions;
  for (int64_t k = 0; k < warmup; ++k)
    actions.push_back(forward(microbatchOf(k), chunkOf(k)));
  for (int64_t k = 0; k < total; ++k) {
    if (warmup + k < total)
      actions.push_back(forward(microbatchOf(warmup + k), chunkOf(warmup + k)));
    actions.push_back(backward(microbatchOf(k), chunks - 1 - chunkOf(k)));
  }
  return actions;
}

/// Where a phase's one-per-(microbatch, virtual stage) count is kept.
enum Slot { ForwardSlot, BackwardSlot, InputSlot, WeightSlot, NumSlots };

Slot slotOf(Phase phase) {
  switch (phase) {
  case Phase::Forward:
    return ForwardSlot;
  case Phase::Backward:
    return BackwardSlot;
  case Phase::InputGradient:
    return InputSlot;
  case Phase::WeightGradient:
    return WeightSlot;
  }
  llvm_unreachable("phase");
}

} // namespace

llvm::StringRef mlir::kina::pipeline::phaseLetter(Phase phase) {
  switch (phase) {
  case Phase::Forward:
    return "F";
  case Phase::Backward:
    return "BW";
  case Phase::InputGradient:
    return "B";
  case Phase::WeightGradient:
    return "W";
  }
  llvm_unreachable("phase");
}

llvm::StringRef mlir::kina::pipeline::scheduleName(ScheduleKind kind) {
  for (const NamedKind &named : kScheduleNames)
    if (named.kind == kind)
      return named.name;
  return "custom";
}

std::optional<ScheduleKind>
mlir::kina::pipeline::parseScheduleKind(llvm::StringRef name) {
  for (const NamedKind &named : kScheduleNames)
    if (named.name == name)
      return named.kind;
  return std::nullopt;
}

std::string mlir::kina::pipeline::listScheduleNames() {
  llvm::SmallVector<llvm::StringRef> names;
  for (const NamedKind &named : kScheduleNames)
    names.push_back(named.name);
  return llvm::join(names, ", ");
}

llvm::Expected<Schedule>
mlir::kina::pipeline::makeSchedule(ScheduleKind kind, int64_t stages,
                                   int64_t microbatches, int64_t chunks) {
  if (kind == ScheduleKind::Custom)
    return error("a custom schedule is parsed, not generated");
  llvm::StringRef name = scheduleName(kind);
  if (stages < 1)
    return error(
        llvm::formatv("a pipeline needs at least 1 stage, not {0}", stages));
  if (microbatches < 1)
    return error(llvm::formatv(
        "a pipeline needs at least 1 microbatch, not {0}", microbatches));
  if (kind == ScheduleKind::Interleaved) {
    if (chunks == 0)
      chunks = kDefaultInterleavedChunks;
    if (chunks < 2)
      return error(llvm::formatv(
          "the interleaved schedule needs at least 2 chunks per stage, not {0}",
          chunks));
    if (microbatches % stages != 0)
      return error(llvm::formatv(
          "the interleaved schedule needs the microbatches ({0}) to be a "
          "multiple of the stages ({1})",
          microbatches, stages));
  } else if (chunks > 1) {
    return error(llvm::formatv("the {0} schedule has 1 chunk per stage, not "
                               "{1} (only the interleaved one has more)",
                               name, chunks));
  } else {
    chunks = 1;
  }
  // Each factor is at most kMaxActions, so the product cannot overflow
  // before it is checked.
  if (stages > kMaxActions || microbatches > kMaxActions ||
      chunks > kMaxActions || 3 * stages * microbatches > kMaxActions / chunks)
    return error(llvm::formatv(
        "{0} stages x {1} microbatches x {2} chunks is more than the {3} "
        "actions a schedule may hold",
        stages, microbatches, chunks, kMaxActions));

  Schedule schedule;
  schedule.kind = kind;
  schedule.stages = stages;
  schedule.microbatches = microbatches;
  schedule.chunks = chunks;
  for (int64_t rank = 0; rank < stages; ++rank) {
    switch (kind) {
    case ScheduleKind::GPipe:
      schedule.ranks.push_back(gpipeRank(microbatches));
      break;
    case ScheduleKind::OneFOneB:
      schedule.ranks.push_back(oneFOneBRank(stages, rank, microbatches));
      break;
    case ScheduleKind::ZeroBubbleH1:
      schedule.ranks.push_back(zeroBubbleH1Rank(stages, rank, microbatches));
      break;
    case ScheduleKind::Interleaved:
      schedule.ranks.push_back(
          interleavedRank(stages, rank, microbatches, chunks));
      break;
    case ScheduleKind::Custom:
      llvm_unreachable("rejected above");
    }
  }
  if (llvm::Error failure = verifySchedule(schedule))
    return std::move(failure);
  return schedule;
}

llvm::Error mlir::kina::pipeline::verifySchedule(const Schedule &schedule) {
  if (schedule.stages < 1 || schedule.microbatches < 1 || schedule.chunks < 1)
    return error(llvm::formatv("a schedule needs at least 1 stage, microbatch "
                               "and chunk, not {0}, {1} and {2}",
                               schedule.stages, schedule.microbatches,
                               schedule.chunks));
  if (static_cast<int64_t>(schedule.ranks.size()) != schedule.stages)
    return error(llvm::formatv("the schedule has {0} stages but lists {1} "
                               "ranks",
                               schedule.stages, schedule.ranks.size()));
  // counts[(microbatch, virtual stage)][slot]
  std::map<std::pair<int64_t, int64_t>, std::array<int64_t, NumSlots>> counts;
  for (int64_t rank = 0; rank < schedule.stages; ++rank) {
    for (const Action &action : schedule.ranks[rank]) {
      std::string name = describeAction(action, schedule.chunks);
      if (action.microbatch < 0 || action.microbatch >= schedule.microbatches)
        return error(llvm::formatv("rank {0} runs {1}, but the microbatches "
                                   "are 0 to {2}",
                                   rank, name, schedule.microbatches - 1));
      if (action.chunk < 0 || action.chunk >= schedule.chunks)
        return error(
            llvm::formatv("rank {0} runs {1}, but its chunks are 0 to {2}",
                          rank, name, schedule.chunks - 1));
      auto &count =
          counts[{action.microbatch, schedule.virtualStage(rank, action)}];
      if (++count[slotOf(action.phase)] > 1)
        return error(llvm::formatv("rank {0} runs {1} twice", rank, name));
    }
  }
  for (int64_t rank = 0; rank < schedule.stages; ++rank) {
    for (int64_t chunk = 0; chunk < schedule.chunks; ++chunk) {
      for (int64_t m = 0; m < schedule.microbatches; ++m) {
        std::array<int64_t, NumSlots> count = {};
        auto found = counts.find({m, chunk * schedule.stages + rank});
        if (found != counts.end())
          count = found->second;
        std::string where =
            schedule.chunks == 1
                ? llvm::formatv("rank {0} never runs", rank).str()
                : llvm::formatv("rank {0} never runs, for chunk {1},", rank,
                                chunk)
                      .str();
        if (!count[ForwardSlot])
          return error(
              llvm::formatv("{0} the forward of microbatch {1}", where, m));
        bool split = count[InputSlot] || count[WeightSlot];
        if (split && count[BackwardSlot])
          return error(llvm::formatv(
              "rank {0} runs both BW{1} and its split parts B{1}, W{1}", rank,
              m));
        if (!split && !count[BackwardSlot])
          return error(
              llvm::formatv("{0} the backward of microbatch {1}", where, m));
        if (split && !count[InputSlot])
          return error(llvm::formatv("{0} B{1} (it runs W{1})", where, m));
        if (split && !count[WeightSlot])
          return error(llvm::formatv("{0} W{1} (it runs B{1})", where, m));
      }
    }
  }
  return llvm::Error::success();
}

std::string mlir::kina::pipeline::describeAction(const Action &action,
                                                 int64_t chunks) {
  std::string text =
      (phaseLetter(action.phase) + llvm::Twine(action.microbatch)).str();
  if (chunks > 1)
    text += "/" + std::to_string(action.chunk);
  return text;
}

void mlir::kina::pipeline::printSchedule(const Schedule &schedule,
                                         llvm::raw_ostream &os) {
  os << "schedule " << scheduleName(schedule.kind)
     << " stages=" << schedule.stages
     << " microbatches=" << schedule.microbatches
     << " chunks=" << schedule.chunks << "\n";
  for (size_t rank = 0; rank < schedule.ranks.size(); ++rank) {
    os << "rank " << rank << ":";
    for (const Action &action : schedule.ranks[rank])
      os << " " << describeAction(action, schedule.chunks);
    os << "\n";
  }
}

namespace {

/// "key=value" of the header, as a positive count.
llvm::Expected<int64_t> headerCount(llvm::StringRef word, llvm::StringRef key,
                                    size_t line) {
  int64_t value = 0;
  if (!word.consume_front(key) || !word.consume_front("=") ||
      word.getAsInteger(10, value) || value < 1)
    return error(llvm::formatv("line {0}: expected {1}=N (N >= 1), got '{2}'",
                               line, key, word));
  return value;
}

llvm::Expected<Action> parseAction(llvm::StringRef word, size_t line) {
  constexpr Phase kByLength[] = {Phase::Backward, Phase::Forward,
                                 Phase::InputGradient, Phase::WeightGradient};
  llvm::StringRef rest = word;
  std::optional<Phase> phase;
  for (Phase candidate : kByLength) // "BW" before "B"
    if (rest.consume_front(phaseLetter(candidate))) {
      phase = candidate;
      break;
    }
  Action action{phase.value_or(Phase::Forward), 0, 0};
  auto [microbatch, chunk] = rest.split('/');
  bool bad = !phase || microbatch.getAsInteger(10, action.microbatch) ||
             (rest.contains('/') && chunk.getAsInteger(10, action.chunk));
  if (bad)
    return error(llvm::formatv(
        "line {0}: '{1}' is not an action (F, BW, B or W, the microbatch, "
        "then /chunk when there are chunks)",
        line, word));
  return action;
}

} // namespace

llvm::Expected<Schedule>
mlir::kina::pipeline::parseSchedule(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  Schedule schedule;
  bool header = false;
  for (size_t index = 0; index < lines.size(); ++index) {
    size_t line = index + 1;
    llvm::StringRef content = lines[index].split('#').first.trim();
    if (content.empty())
      continue;
    llvm::SmallVector<llvm::StringRef> words;
    content.split(words, ' ', -1, /*KeepEmpty=*/false);
    if (!header) {
      if (words.size() != 5 || words[0] != "schedule")
        return error(llvm::formatv(
            "line {0}: expected 'schedule NAME stages=S microbatches=M "
            "chunks=V'",
            line));
      schedule.kind =
          parseScheduleKind(words[1]).value_or(ScheduleKind::Custom);
      auto stages = headerCount(words[2], "stages", line);
      auto microbatches = headerCount(words[3], "microbatches", line);
      auto chunks = headerCount(words[4], "chunks", line);
      for (auto *count : {&stages, &microbatches, &chunks})
        if (!*count)
          return count->takeError();
      schedule.stages = *stages;
      schedule.microbatches = *microbatches;
      schedule.chunks = *chunks;
      header = true;
      continue;
    }
    int64_t rank = -1;
    llvm::StringRef rankWord = words[0];
    if (words.size() < 2 || rankWord != "rank" || !words[1].consume_back(":") ||
        words[1].getAsInteger(10, rank) ||
        rank != static_cast<int64_t>(schedule.ranks.size()))
      return error(llvm::formatv("line {0}: expected 'rank {1}: ACTIONS...'",
                                 line, schedule.ranks.size()));
    schedule.ranks.emplace_back();
    for (llvm::StringRef word : llvm::drop_begin(words, 2)) {
      llvm::Expected<Action> action = parseAction(word, line);
      if (!action)
        return action.takeError();
      schedule.ranks.back().push_back(*action);
    }
  }
  if (!header)
    return error("an empty schedule: expected 'schedule NAME stages=S "
                 "microbatches=M chunks=V'");
  if (llvm::Error failure = verifySchedule(schedule))
    return std::move(failure);
  return schedule;
}

std::vector<int64_t>
mlir::kina::pipeline::waitCycle(int64_t start,
                                llvm::function_ref<int64_t(int64_t)> waitsFor) {
  std::vector<int64_t> seen;
  int64_t rank = start;
  while (!llvm::is_contained(seen, rank)) {
    seen.push_back(rank);
    rank = waitsFor(rank);
  }
  return std::vector<int64_t>(llvm::find(seen, rank), seen.end());
}

std::vector<int64_t>
mlir::kina::pipeline::peakInFlight(const Schedule &schedule) {
  std::vector<int64_t> peaks;
  for (const std::vector<Action> &actions : schedule.ranks) {
    int64_t inFlight = 0, peak = 0;
    for (const Action &action : actions) {
      if (action.phase == Phase::Forward)
        peak = std::max(peak, ++inFlight);
      else if (action.phase != Phase::WeightGradient)
        --inFlight;
    }
    peaks.push_back(peak);
  }
  return peaks;
}
