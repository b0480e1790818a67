//===- ScheduleTest.cpp - Bubbles, peaks and deadlocks of the schedules ---===//
//
// The idle fractions are the papers' closed forms, computed here from p, M
// and v; the clock gets them by running the generated orders.
//
//===----------------------------------------------------------------------===//

#include "Kina/PipelineSchedule/Schedule.h"
#include "Kina/PipelineSchedule/LogicalClock.h"
#include "Kina/PipelineSchedule/Rendezvous.h"

#include "gtest/gtest.h"

using namespace mlir::kina::pipeline;

namespace {

Schedule make(ScheduleKind kind, int64_t stages, int64_t microbatches,
              int64_t chunks = 0) {
  llvm::Expected<Schedule> schedule =
      makeSchedule(kind, stages, microbatches, chunks);
  if (!schedule) {
    ADD_FAILURE() << llvm::toString(schedule.takeError());
    return {};
  }
  return *schedule;
}

std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "";
}

/// (p - 1) / (units M + p - 1): the bubble of a schedule whose rank works
/// `units` time units per microbatch, with one unit of bubble per stage.
double bubble(int64_t stages, int64_t units) {
  return double(stages - 1) / double(units + stages - 1);
}

struct Expected {
  ScheduleKind kind;
  int64_t chunks;
  double (*idle)(int64_t p, int64_t m, int64_t v);
};

const Expected kExpected[] = {
    {ScheduleKind::GPipe, 1,
     [](int64_t p, int64_t m, int64_t) { return bubble(p, m); }},
    {ScheduleKind::OneFOneB, 1,
     [](int64_t p, int64_t m, int64_t) { return bubble(p, m); }},
    {ScheduleKind::Interleaved, 2,
     [](int64_t p, int64_t m, int64_t v) { return bubble(p, v * m); }},
    {ScheduleKind::ZeroBubbleH1, 1,
     [](int64_t p, int64_t m, int64_t) { return bubble(p, 3 * m); }},
};

TEST(PipelineSchedule, IdleFractionsAreTheBubbles) {
  for (const Expected &expected : kExpected) {
    for (int64_t microbatches : {4, 8, 16}) {
      Schedule schedule = make(expected.kind, 4, microbatches);
      llvm::Expected<Timeline> timeline = runLogicalClock(schedule);
      ASSERT_TRUE(bool(timeline)) << llvm::toString(timeline.takeError());
      double want = expected.idle(4, microbatches, expected.chunks);
      for (int64_t rank = 0; rank < 4; ++rank)
        EXPECT_NEAR(timeline->idleFraction(rank), want, 1e-3)
            << scheduleName(expected.kind).str() << " M=" << microbatches
            << " rank " << rank;
    }
  }
}

TEST(PipelineSchedule, IdleFractionsMatchThePaperFigures) {
  // The table for p = 4, M = 8: 27.3%, 15.8%, 11.1%.
  auto idle = [](ScheduleKind kind) {
    llvm::Expected<Timeline> timeline = runLogicalClock(make(kind, 4, 8));
    return timeline ? timeline->idleFraction(0) : -1.0;
  };
  EXPECT_NEAR(idle(ScheduleKind::OneFOneB), 0.273, 0.001);
  EXPECT_NEAR(idle(ScheduleKind::Interleaved), 0.158, 0.001);
  EXPECT_NEAR(idle(ScheduleKind::ZeroBubbleH1), 0.111, 0.001);
}

TEST(PipelineSchedule, PeakInFlight) {
  const int64_t p = 4, v = 2;
  for (int64_t m : {4, 8, 16}) {
    std::vector<int64_t> gpipe = peakInFlight(make(ScheduleKind::GPipe, p, m));
    std::vector<int64_t> oneF =
        peakInFlight(make(ScheduleKind::OneFOneB, p, m));
    std::vector<int64_t> zb =
        peakInFlight(make(ScheduleKind::ZeroBubbleH1, p, m));
    std::vector<int64_t> interleaved =
        peakInFlight(make(ScheduleKind::Interleaved, p, m, v));
    for (int64_t s = 0; s < p; ++s) {
      EXPECT_EQ(gpipe[s], m);
      EXPECT_EQ(oneF[s], p - s);
      EXPECT_EQ(zb[s], p - s);
      // docs/design.md: the warm-up's forwards and the steady state's one,
      // counted in chunk-microbatches.
      EXPECT_EQ(interleaved[s],
                std::min(2 * (p - s - 1) + (v - 1) * p + 1, v * m))
          << "M=" << m << " stage " << s;
    }
  }
}

TEST(PipelineSchedule, GeneratedSchedulesNeedNoBuffering) {
  for (const Expected &expected : kExpected)
    for (int64_t stages : {1, 2, 3, 4})
      for (int64_t microbatches : {1, 2, 4, 6, 8, 12, 16}) {
        llvm::Expected<Schedule> schedule =
            makeSchedule(expected.kind, stages, microbatches);
        if (!schedule) { // the interleaved schedule's divisibility
          llvm::consumeError(schedule.takeError());
          EXPECT_EQ(expected.kind, ScheduleKind::Interleaved);
          continue;
        }
        EXPECT_EQ(errorOf(checkRendezvous(*schedule)), "")
            << scheduleName(expected.kind).str() << " p=" << stages
            << " M=" << microbatches;
        llvm::Expected<Timeline> timeline = runLogicalClock(*schedule);
        EXPECT_TRUE(bool(timeline)) << llvm::toString(timeline.takeError());
      }
}

TEST(PipelineSchedule, PrintsAndParsesBack) {
  for (const Expected &expected : kExpected) {
    Schedule schedule = make(expected.kind, 4, 8);
    std::string text;
    llvm::raw_string_ostream os(text);
    printSchedule(schedule, os);
    llvm::Expected<Schedule> parsed = parseSchedule(text);
    ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
    EXPECT_EQ(parsed->kind, expected.kind);
    EXPECT_EQ(parsed->ranks, schedule.ranks);
  }
  Schedule oneF = make(ScheduleKind::OneFOneB, 2, 3);
  std::string text;
  llvm::raw_string_ostream os(text);
  printSchedule(oneF, os);
  EXPECT_EQ(text, "schedule 1f1b stages=2 microbatches=3 chunks=1\n"
                  "rank 0: F0 F1 BW0 F2 BW1 BW2\n"
                  "rank 1: F0 BW0 F1 BW1 F2 BW2\n");
}

TEST(PipelineSchedule, RendezvousNamesTheCycle) {
  // Rank 1 runs microbatch 1's backward before microbatch 0's: rank 0
  // waits for BW0's cotangent while rank 1 waits to send BW1's.
  llvm::Expected<Schedule> broken =
      parseSchedule("schedule custom stages=2 microbatches=2 chunks=1\n"
                    "rank 0: F0 F1 BW0 BW1\n"
                    "rank 1: F0 F1 BW1 BW0\n");
  ASSERT_TRUE(bool(broken)) << llvm::toString(broken.takeError());
  EXPECT_EQ(errorOf(checkRendezvous(*broken)),
            "the schedule deadlocks when a send waits for its receive: "
            "rank 0 waits before BW0 to receive BW0's cotangent from rank 1; "
            "rank 1 waits before BW0 to send BW1's cotangent to rank 0");
  // Unbuffered sends deadlock this one; the clock, whose transfers never
  // block, still runs it.
  EXPECT_TRUE(bool(runLogicalClock(*broken)));
}

TEST(PipelineSchedule, ClockNamesACycleOfDependencies) {
  llvm::Expected<Schedule> broken =
      parseSchedule("schedule custom stages=2 microbatches=2 chunks=1\n"
                    "rank 0: F0 BW1 F1 BW0\n"
                    "rank 1: F0 F1 BW1 BW0\n");
  ASSERT_TRUE(bool(broken)) << llvm::toString(broken.takeError());
  llvm::Expected<Timeline> timeline = runLogicalClock(*broken);
  ASSERT_FALSE(bool(timeline));
  EXPECT_EQ(llvm::toString(timeline.takeError()),
            "the schedule cannot finish, a cycle of waits: rank 0 waits at "
            "BW1 for F1 of rank 0");
}

TEST(PipelineSchedule, BadCountsAreNamed) {
  auto message = [](llvm::Expected<Schedule> schedule) {
    return schedule ? std::string("") : llvm::toString(schedule.takeError());
  };
  EXPECT_EQ(message(makeSchedule(ScheduleKind::Interleaved, 4, 6)),
            "the interleaved schedule needs the microbatches (6) to be a "
            "multiple of the stages (4)");
  EXPECT_EQ(message(makeSchedule(ScheduleKind::OneFOneB, 4, 8, 2)),
            "the 1f1b schedule has 1 chunk per stage, not 2 (only the "
            "interleaved one has more)");
  EXPECT_EQ(message(makeSchedule(ScheduleKind::GPipe, 0, 8)),
            "a pipeline needs at least 1 stage, not 0");
  EXPECT_EQ(message(parseSchedule("schedule custom stages=2 microbatches=1 "
                                  "chunks=1\nrank 0: F0 BW0\nrank 1: F0\n")),
            "rank 1 never runs the backward of microbatch 0");
  EXPECT_EQ(message(parseSchedule("schedule custom stages=1 microbatches=1 "
                                  "chunks=1\nrank 0: F0 X0\n")),
            "line 2: 'X0' is not an action (F, BW, B or W, the microbatch, "
            "then /chunk when there are chunks)");
  EXPECT_EQ(message(parseSchedule("schedule custom stages=1 microbatches=1 "
                                  "chunks=1\nrank 0: F0 F0 BW0\n")),
            "rank 0 runs F0 twice");
  EXPECT_EQ(message(parseSchedule("schedule custom stages=1 microbatches=2 "
                                  "chunks=1\nrank 0: F0 F1 BW0 B1 W1 BW1\n")),
            "rank 0 runs both BW1 and its split parts B1, W1");
}

} // namespace
