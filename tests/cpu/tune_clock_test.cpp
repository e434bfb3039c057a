// tune()'s SM clock guard (src/api/tune_clock.h), on scripted clocks: a block whose reading fell
// is timed again after a cool-down, only its last attempt's samples count, the retimes stop at
// the limit, and with the guard off no clock is read.
#include <gtest/gtest.h>

#include <cstddef>
#include <deque>
#include <vector>

#include "api/tune_clock.h"
#include "api/tune_schedule.h"

namespace sailfish::detail {
namespace {

// Plays back one clock reading per call (the last one again once the script runs out) and
// answers every timed replay with a duration that names the call: candidate * 100 + call
// number, so the kept samples show which attempt they came from.
struct Script {
  std::deque<double> readings;
  int reads = 0, pauses = 0, replays = 0;
  double last = 1980.0;
  RunReplay replay() {
    return [this](int candidate, bool timed, double* us) {
      ++replays;
      if (timed) *us = candidate * 100.0 + replays;
      return Status();
    };
  }
  ReadClock clock() {
    return [this](double* mhz) {
      ++reads;
      if (!readings.empty()) {
        last = readings.front();
        readings.pop_front();
      }
      *mhz = last;
      return Status();
    };
  }
  Pause pause() {
    return [this] { ++pauses; };
  }
};

ClockGuard guard(double drop, int max_retimes, int polls) {
  ClockGuard g;
  g.drop = drop;
  g.max_retimes = max_retimes;
  g.max_cool_down_polls = polls;
  return g;
}

TEST(TuneClock, BlocksAreRunsOfOneCandidateLedByTheUntimedReplay) {
  const std::vector<TuneReplay> order = tune_replay_schedule(3, 5, false);
  const std::vector<TuneBlock> blocks = tune_replay_blocks(order);
  ASSERT_EQ(blocks.size(), 6u);  // one per candidate and pass
  std::vector<int> candidates;
  size_t covered = 0;
  for (const TuneBlock& b : blocks) {
    candidates.push_back(b.candidate);
    EXPECT_EQ(b.first, covered);
    EXPECT_FALSE(order[b.first].timed);
    covered += b.count;
  }
  EXPECT_EQ(covered, order.size());
  EXPECT_EQ(candidates, (std::vector<int>{0, 1, 2, 2, 1, 0}));
  EXPECT_EQ(blocks[0].count, 4u);  // the lead and 3 forward rounds
  EXPECT_EQ(blocks[5].count, 3u);  // the lead and 2 backward rounds
  // Interleaved: each replay a block of its own.
  EXPECT_EQ(tune_replay_blocks(tune_replay_schedule(3, 2, true)).size(), 6u);
  EXPECT_TRUE(tune_replay_blocks({}).empty());
}

TEST(TuneClock, FallenReadingsAreTheOnesBelowTheDrop) {
  EXPECT_FALSE(clock_fell(1980.0, 1980.0, 0.03));
  EXPECT_FALSE(clock_fell(1921.0, 1980.0, 0.03));
  EXPECT_TRUE(clock_fell(1900.0, 1980.0, 0.03));
  EXPECT_FALSE(clock_fell(1000.0, 1980.0, 0.0));  // the guard off
}

TEST(TuneClock, AFallenBlockIsTimedAgainAfterTheClockRecovers) {
  // 2 candidates, 2 rounds: blocks [c0: lead + 1], [c1: lead + 1], [c1: lead + 1], [c0: ...].
  const std::vector<TuneReplay> order = tune_replay_schedule(2, 2, false);
  Script s;
  // idle, c0's block; c1's block falls, two pauses read 1800 then 1975, its second attempt
  // reads 1970; then the last two blocks hold.
  s.readings = {1980, 1979, 1750, 1800, 1975, 1970, 1978, 1979};
  TunedTimes t;
  ASSERT_TRUE(time_schedule(order, 2, guard(0.03, 2, 10), s.replay(), s.clock(), s.pause(), &t)
                  .ok());
  EXPECT_EQ(t.retimes, (std::vector<int>{0, 1}));
  EXPECT_EQ(s.pauses, 2);
  EXPECT_EQ(s.replays, 10);  // 8 scheduled, c1's first block twice
  EXPECT_DOUBLE_EQ(t.reference_mhz, 1980.0);
  // c1 keeps its second attempt (replays 5-6, timed at call 6) and its backward block (call 8),
  // not the fallen one (call 4).
  EXPECT_EQ(t.us[1], (std::vector<double>{106.0, 108.0}));
  EXPECT_EQ(t.us[0], (std::vector<double>{2.0, 10.0}));
  EXPECT_DOUBLE_EQ(t.mhz[1], 1970.0);  // the lowest kept reading, not the fallen one
  EXPECT_DOUBLE_EQ(t.mhz[0], 1979.0);
}

TEST(TuneClock, RetimesStopAtTheLimitAndKeepTheLastAttempt) {
  const std::vector<TuneReplay> order = tune_replay_schedule(1, 1, false);
  Script s;
  s.readings = {1980, 1700};  // every reading after the idle one stays fallen
  TunedTimes t;
  ASSERT_TRUE(time_schedule(order, 1, guard(0.03, 2, 3), s.replay(), s.clock(), s.pause(), &t)
                  .ok());
  EXPECT_EQ(t.retimes, (std::vector<int>{2}));
  EXPECT_EQ(s.replays, 6);  // three attempts of lead + 1
  EXPECT_EQ(s.pauses, 6);   // the full cool-down before each of the two retimes
  EXPECT_EQ(t.us[0], (std::vector<double>{6.0}));
  EXPECT_DOUBLE_EQ(t.mhz[0], 1700.0);
}

TEST(TuneClock, TheReferenceRisesWithTheReadings) {
  // The idle reading is low; a higher one later becomes the reference and the next block,
  // 4% below it, is timed again.
  const std::vector<TuneReplay> order = tune_replay_schedule(2, 1, false);
  Script s;
  s.readings = {1900, 1980, 1900, 1980, 1975};
  TunedTimes t;
  ASSERT_TRUE(time_schedule(order, 2, guard(0.03, 1, 5), s.replay(), s.clock(), s.pause(), &t)
                  .ok());
  EXPECT_EQ(t.retimes, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(t.reference_mhz, 1980.0);
  EXPECT_DOUBLE_EQ(t.mhz[1], 1975.0);
}

TEST(TuneClock, WithTheGuardOffNoClockIsRead) {
  const std::vector<TuneReplay> order = tune_replay_schedule(3, 4, false);
  Script s;
  s.readings = {1000};
  TunedTimes t;
  ASSERT_TRUE(time_schedule(order, 3, guard(0.0, 2, 5), s.replay(), s.clock(), s.pause(), &t)
                  .ok());
  EXPECT_EQ(s.reads, 0);
  EXPECT_EQ(s.replays, static_cast<int>(order.size()));
  EXPECT_EQ(t.retimes, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(t.mhz, (std::vector<double>{0.0, 0.0, 0.0}));
  EXPECT_DOUBLE_EQ(t.reference_mhz, 0.0);
  for (const std::vector<double>& us : t.us) EXPECT_EQ(us.size(), 4u);
}

TEST(TuneClock, AFailedReplayOrReadingStopsTheTiming) {
  const std::vector<TuneReplay> order = tune_replay_schedule(2, 2, false);
  Script s;
  int calls = 0;
  RunReplay failing = [&](int, bool, double*) {
    return ++calls == 3 ? Status(StatusCode::kCudaError, "replay 3 failed") : Status();
  };
  TunedTimes t;
  const Status st = time_schedule(order, 2, guard(0.03, 2, 5), failing, s.clock(), s.pause(), &t);
  EXPECT_EQ(st.code(), StatusCode::kCudaError);
  EXPECT_EQ(calls, 3);
  ReadClock bad_clock = [](double*) { return Status(StatusCode::kCudaError, "no clock"); };
  EXPECT_EQ(time_schedule(order, 2, guard(0.03, 2, 5), s.replay(), bad_clock, s.pause(), &t)
                .code(),
            StatusCode::kCudaError);
}

}  // namespace
}  // namespace sailfish::detail
