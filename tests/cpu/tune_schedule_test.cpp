// tune()'s replay order (src/api/tune_schedule.h): every candidate timed `rounds` times, each
// timed replay after a replay of its own graph unless interleaving was asked for, and the two
// back-to-back passes in opposite orders.
#include <gtest/gtest.h>

#include <vector>

#include "api/tune_schedule.h"

namespace sailfish::detail {
namespace {

std::vector<int> timed_counts(const std::vector<TuneReplay>& order, int candidates) {
  std::vector<int> counts(static_cast<size_t>(candidates), 0);
  for (const TuneReplay& r : order) {
    if (r.timed) ++counts[static_cast<size_t>(r.candidate)];
  }
  return counts;
}

TEST(TuneSchedule, BackToBackEachTimedReplayFollowsItsOwnGraph) {
  for (int candidates : {1, 2, 5, 25}) {
    for (int rounds : {1, 2, 7, 8}) {
      const std::vector<TuneReplay> order = tune_replay_schedule(candidates, rounds, false);
      EXPECT_EQ(timed_counts(order, candidates), std::vector<int>(candidates, rounds));
      ASSERT_FALSE(order.empty());
      EXPECT_FALSE(order.front().timed);
      for (size_t s = 1; s < order.size(); ++s) {
        if (order[s].timed) {
          EXPECT_EQ(order[s].candidate, order[s - 1].candidate)
              << "replay " << s << " of " << candidates << " x " << rounds;
        }
      }
    }
  }
}

TEST(TuneSchedule, BackToBackPassesRunInOppositeOrders) {
  // 3 candidates, 5 rounds: 3 forward, 2 backward, each block led by an untimed replay.
  const std::vector<TuneReplay> order = tune_replay_schedule(3, 5, false);
  std::vector<int> leads;
  for (const TuneReplay& r : order) {
    if (!r.timed) leads.push_back(r.candidate);
  }
  EXPECT_EQ(leads, (std::vector<int>{0, 1, 2, 2, 1, 0}));
  ASSERT_EQ(order.size(), 3u * 5u + 6u);
  EXPECT_EQ(order[1].candidate, 0);
  EXPECT_EQ(order[3].candidate, 0);
  EXPECT_FALSE(order[4].timed);  // the second block, candidate 1
  // One round: no second pass, so the blocks run forward only.
  const std::vector<TuneReplay> single = tune_replay_schedule(3, 1, false);
  ASSERT_EQ(single.size(), 6u);
  EXPECT_EQ(single[4].candidate, 2);
}

TEST(TuneSchedule, InterleavedTakesTurnsAndTimesEveryReplay) {
  const std::vector<TuneReplay> order = tune_replay_schedule(3, 2, true);
  ASSERT_EQ(order.size(), 6u);
  for (size_t s = 0; s < order.size(); ++s) {
    EXPECT_TRUE(order[s].timed);
    EXPECT_EQ(order[s].candidate, static_cast<int>(s % 3));
  }
}

TEST(TuneSchedule, NothingToTimeGivesNoReplays) {
  EXPECT_TRUE(tune_replay_schedule(0, 7, false).empty());
  EXPECT_TRUE(tune_replay_schedule(4, 0, false).empty());
  EXPECT_TRUE(tune_replay_schedule(4, 0, true).empty());
}

}  // namespace
}  // namespace sailfish::detail
