//===- LogicalClock.cpp - Each action as soon as its rank and inputs allow ===//

#include "Kina/PipelineSchedule/LogicalClock.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

using namespace mlir::kina::pipeline;

double PhaseCosts::of(Phase phase, int64_t stage) const {
  auto [f, b, w] = stages.empty()
                       ? std::array<double, 3>{forward, inputGradient,
                                               weightGradient}
                       : stages[stage];
  switch (phase) {
  case Phase::Forward:
    return f;
  case Phase::Backward:
    return b + w;
  case Phase::InputGradient:
    return b;
  case Phase::WeightGradient:
    return w;
  }
  llvm_unreachable("phase");
}

double Timeline::busy(int64_t rank) const {
  double total = 0;
  for (const Interval &interval : ranks[rank])
    total += interval.end - interval.start;
  return total;
}

double Timeline::idleFraction(int64_t rank) const {
  return makespan > 0 ? 1 - busy(rank) / makespan : 0;
}

namespace {

/// What an action produces for others: a forward's activation, or the
/// input's cotangent (of a B, or of a B+W). A W produces nothing another
/// action waits for.
enum class Product { Activation, Cotangent, None };

Product productOf(Phase phase) {
  switch (phase) {
  case Phase::Forward:
    return Product::Activation;
  case Phase::Backward:
  case Phase::InputGradient:
    return Product::Cotangent;
  case Phase::WeightGradient:
    return Product::None;
  }
  llvm_unreachable("phase");
}

/// (product, microbatch, virtual stage)
using Key = std::tuple<Product, int64_t, int64_t>;

/// The products `action` (on `rank`) waits for.
std::vector<Key> inputsOf(const Schedule &schedule, int64_t rank,
                          const Action &action) {
  int64_t stage = schedule.virtualStage(rank, action);
  int64_t m = action.microbatch;
  std::vector<Key> inputs;
  switch (action.phase) {
  case Phase::Forward:
    if (stage > 0)
      inputs.push_back({Product::Activation, m, stage - 1});
    break;
  case Phase::Backward:
  case Phase::InputGradient:
    inputs.push_back({Product::Activation, m, stage});
    if (stage + 1 < schedule.virtualStages())
      inputs.push_back({Product::Cotangent, m, stage + 1});
    break;
  case Phase::WeightGradient:
    inputs.push_back({Product::Cotangent, m, stage});
    break;
  }
  return inputs;
}

/// The error naming the cycle of waits that stops every rank left.
llvm::Error
cycleError(const Schedule &schedule, const std::vector<size_t> &next,
           const std::map<Key, double> &done,
           const std::map<Key, std::pair<int64_t, Action>> &producer) {
  auto waitOf = [&](int64_t rank) {
    const Action &action = schedule.ranks[rank][next[rank]];
    for (const Key &input : inputsOf(schedule, rank, action))
      if (!done.count(input))
        return producer.at(input);
    llvm_unreachable("a blocked rank waits for something");
  };
  int64_t first = 0;
  while (next[first] == schedule.ranks[first].size())
    ++first;
  std::vector<std::string> waits;
  for (int64_t rank :
       waitCycle(first, [&](int64_t r) { return waitOf(r).first; })) {
    auto [other, awaited] = waitOf(rank);
    waits.push_back(llvm::formatv(
        "rank {0} waits at {1} for {2} of rank {3}", rank,
        describeAction(schedule.ranks[rank][next[rank]], schedule.chunks),
        describeAction(awaited, schedule.chunks), other));
  }
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "the schedule cannot finish, a cycle of waits: " +
          llvm::join(waits, "; "));
}

} // namespace

llvm::Expected<Timeline>
mlir::kina::pipeline::runLogicalClock(const Schedule &schedule,
                                      const PhaseCosts &costs) {
  if (llvm::Error failure = verifySchedule(schedule))
    return std::move(failure);
  std::vector<std::pair<std::string, double>> given = {
      {"forward", costs.forward},
      {"input gradient", costs.inputGradient},
      {"weight gradient", costs.weightGradient},
      {"transfer", costs.transfer}};
  if (!costs.stages.empty() &&
      int64_t(costs.stages.size()) != schedule.virtualStages())
    return llvm::createStringError(
        llvm::formatv("costs are given for {0} stages; the schedule has {1} "
                      "virtual stages",
                      costs.stages.size(), schedule.virtualStages())
            .str());
  for (auto [index, stage] : llvm::enumerate(costs.stages))
    for (auto [name, cost] :
         llvm::zip(std::array<const char *, 3>{"forward", "input gradient",
                                               "weight gradient"},
                   stage))
      given.push_back({llvm::formatv("stage {0} {1}", index, name).str(),
                       cost});
  for (auto &[name, cost] : given)
    if (!std::isfinite(cost) || cost < 0)
      return llvm::createStringError(
          llvm::formatv("a {0}'s cost must be finite and at least 0, not {1}",
                        name, cost)
              .str());
  std::map<Key, std::pair<int64_t, Action>> producer;
  for (int64_t rank = 0; rank < schedule.stages; ++rank)
    for (const Action &action : schedule.ranks[rank])
      producer[{productOf(action.phase), action.microbatch,
                schedule.virtualStage(rank, action)}] = {rank, action};

  Timeline timeline;
  timeline.ranks.resize(schedule.stages);
  std::vector<size_t> next(schedule.stages, 0);
  std::vector<double> freeAt(schedule.stages, 0);
  std::map<Key, double> done; // product -> when it is ready
  size_t left = 0;
  for (const auto &actions : schedule.ranks)
    left += actions.size();
  while (left > 0) {
    bool progressed = false;
    for (int64_t rank = 0; rank < schedule.stages; ++rank) {
      while (next[rank] < schedule.ranks[rank].size()) {
        const Action &action = schedule.ranks[rank][next[rank]];
        double start = freeAt[rank];
        bool ready = true;
        for (const Key &input : inputsOf(schedule, rank, action)) {
          auto found = done.find(input);
          if (found == done.end()) {
            ready = false;
            break;
          }
          bool remote = producer.at(input).first != rank;
          start =
              std::max(start, found->second + (remote ? costs.transfer : 0));
        }
        if (!ready)
          break;
        double end = start + costs.of(action.phase,
                                      schedule.virtualStage(rank, action));
        timeline.ranks[rank].push_back({action, start, end});
        if (productOf(action.phase) != Product::None)
          done[{productOf(action.phase), action.microbatch,
                schedule.virtualStage(rank, action)}] = end;
        freeAt[rank] = end;
        timeline.makespan = std::max(timeline.makespan, end);
        ++next[rank];
        --left;
        progressed = true;
      }
    }
    if (!progressed)
      return cycleError(schedule, next, done, producer);
  }
  return timeline;
}
