//===- PipelineScheduleBindings.cpp - Schedules to and from Python --------===//
//
// Stateless: every call takes the schedule's text (what `printSchedule`
// writes), so Python holds a schedule as a string and nothing else.
//
//===----------------------------------------------------------------------===//

#include "PipelineScheduleBindings.h"

#include "Kina/PipelineSchedule/LogicalClock.h"
#include "Kina/PipelineSchedule/Rendezvous.h"
#include "Kina/PipelineSchedule/Schedule.h"

#include <pybind11/stl.h>

namespace py = pybind11;
using namespace mlir::kina::pipeline;

namespace {

/// The value, or a ValueError with the error's text.
template <typename T> T orThrow(llvm::Expected<T> value) {
  if (!value)
    throw py::value_error(llvm::toString(value.takeError()));
  return std::move(*value);
}

std::string text(const Schedule &schedule) {
  std::string out;
  llvm::raw_string_ostream os(out);
  printSchedule(schedule, os);
  return out;
}

} // namespace

void bindPipelineSchedule(py::module_ &m) {
  m.def(
      "pipeline_generate",
      [](const std::string &kind, int64_t stages, int64_t microbatches,
         int64_t chunks) {
        std::optional<ScheduleKind> parsed = parseScheduleKind(kind);
        if (!parsed)
          throw py::value_error("unknown schedule '" + kind + "'; one of " +
                                listScheduleNames());
        return text(
            orThrow(makeSchedule(*parsed, stages, microbatches, chunks)));
      },
      py::arg("kind"), py::arg("stages"), py::arg("microbatches"),
      py::arg("chunks") = 0,
      "The text of a generated schedule (gpipe, 1f1b, interleaved, zb-h1).");
  m.def(
      "pipeline_read",
      [](const std::string &source) {
        Schedule schedule = orThrow(parseSchedule(source));
        std::vector<std::vector<std::tuple<std::string, int64_t, int64_t>>>
            ranks;
        for (const auto &actions : schedule.ranks) {
          ranks.emplace_back();
          for (const Action &action : actions)
            ranks.back().emplace_back(phaseLetter(action.phase).str(),
                                      action.microbatch, action.chunk);
        }
        return py::make_tuple(text(schedule), scheduleName(schedule.kind).str(),
                              schedule.stages, schedule.microbatches,
                              schedule.chunks, ranks, peakInFlight(schedule));
      },
      py::arg("text"),
      "Reads and checks a schedule's text: (canonical text, kind, stages, "
      "microbatches, chunks, per rank [(phase, microbatch, chunk)], peak "
      "in-flight per rank).");
  m.def(
      "pipeline_clock",
      [](const std::string &source, double forward, double inputGradient,
         double weightGradient, double transfer,
         const std::vector<std::array<double, 3>> &stages) {
        Schedule schedule = orThrow(parseSchedule(source));
        Timeline timeline =
            orThrow(runLogicalClock(schedule, {forward, inputGradient,
                                               weightGradient, transfer,
                                               stages}));
        std::vector<std::vector<std::pair<double, double>>> ranks;
        for (const auto &intervals : timeline.ranks) {
          ranks.emplace_back();
          for (const Timeline::Interval &interval : intervals)
            ranks.back().emplace_back(interval.start, interval.end);
        }
        return py::make_tuple(timeline.makespan, ranks);
      },
      py::arg("text"), py::arg("forward"), py::arg("input_gradient"),
      py::arg("weight_gradient"), py::arg("transfer"),
      py::arg("stages") = std::vector<std::array<double, 3>>(),
      "Runs a schedule on the logical clock: (makespan, per rank [(start, "
      "end)] in its actions' order); `stages`: per virtual stage (F, B, W) "
      "costs instead of the three given. A ValueError names a cycle of "
      "waits.");
  m.def(
      "pipeline_rendezvous",
      [](const std::string &source) {
        Schedule schedule = orThrow(parseSchedule(source));
        llvm::Error error = checkRendezvous(schedule);
        return error ? llvm::toString(std::move(error)) : std::string();
      },
      py::arg("text"),
      "'' when the schedule's transfers finish with unbuffered sends; "
      "otherwise the cycle of waits.");
  m.def(
      "pipeline_programs",
      [](const std::string &source) {
        Schedule schedule = orThrow(parseSchedule(source));
        auto action = [](const Action &a) {
          return py::make_tuple(phaseLetter(a.phase).str(), a.microbatch,
                                a.chunk);
        };
        auto messages = [&](const std::vector<Message> &list) {
          py::list out;
          for (const Message &m : list)
            out.append(py::make_tuple(action(m.producedBy), m.from, m.to));
          return out;
        };
        py::list ranks;
        for (const auto &program : lowerToPrograms(schedule)) {
          py::list steps;
          for (const ProgramStep &step : program)
            steps.append(
                py::make_tuple(messages(step.sends), messages(step.receives),
                               messages(step.awaits),
                               step.compute ? py::object(action(*step.compute))
                                            : py::object(py::none())));
          ranks.append(steps);
        }
        return ranks;
      },
      py::arg("text"),
      "Each rank's program (Rendezvous.h): per step (sends, receives, "
      "awaits, compute), a message as ((phase, microbatch, chunk) of its "
      "producer, from rank, to rank), compute as (phase, microbatch, chunk) "
      "or None.");
}
