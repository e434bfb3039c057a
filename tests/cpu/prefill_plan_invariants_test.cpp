// The prefill planner (prefill/launch.cu, plan_prefill: host only, no device queries) on random
// problems: any shape, format and forced choice gets a plan the launcher can run as it is, or an
// error that names the setting at fault. "Can run" is what run_prefill and the kernels take for
// granted: a tile width the kernels are built for, tiles that cover M and N, a depth within the
// k-blocks, a pipeline between the deadlock floor and what fits the CTA's shared memory, a grid of
// at least one CTA and no more than the SMs hold at once, 32-bit tokens and work units, and a
// workspace that holds the activation copy and the partials. Fresh problems each run; the seed is
// printed (testing::test_seed), and SAILFISH_TEST_SEED replays one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>

#include "prefill/batch_invariant.h"
#include "prefill/config.h"
#include "prefill/launch.h"
#include "prefill/stream_k.h"
#include "random_problems.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::maybe;
using testing::pick;
using testing::uniform;

// The first launch condition plan breaks, or "".
std::string broken_condition(const Plan& plan) {
  const Problem& p = plan.problem;
  const PackedGeometry& g = p.geometry;
  const PrefillPlan& f = plan.prefill;
  const int64_t m = std::max<int64_t>(p.m, 1);
  const bool zero_points = p.zero_kind != ZeroPointKind::kNone;
  if (!prefill::is_token_width(f.tokens)) return "a tile width no kernel has";
  if (int64_t(f.m_tiles) * f.tokens < m || int64_t(f.m_tiles - 1) * f.tokens >= m) {
    return "token tiles do not cover M exactly";
  }
  if (int64_t(f.n_tiles) * prefill::kConsumers < g.n_blocks) return "n tiles do not cover N";
  if (f.splits < 1 || f.splits > std::max<int64_t>(1, g.k_blocks)) return "split depth";
  if (f.stream_k && f.splits != 1) return "Stream-K with a split depth";
  if (f.stages < prefill::kMinStages ||
      f.stages > prefill::max_stages(g.bits, f.tokens, zero_points)) {
    return "pipeline depth outside 3 .. what fits";
  }
  if (prefill::shared_bytes(g.bits, f.tokens, f.stages, zero_points) >
      prefill::cta_shared_budget(f.tokens)) {
    return "shared memory above the CTA's share";
  }
  const int64_t tiles = int64_t(f.n_tiles) * f.m_tiles;
  if (f.grid < 1 || f.grid > int64_t(plan.sm_count) * prefill::ctas_per_sm(f.tokens)) {
    return "grid outside 1 .. what the SMs hold";
  }
  if (!f.stream_k && f.grid > tiles * f.splits) return "more CTAs than work units";
  if (p.m > std::numeric_limits<int32_t>::max() / 2 ||
      tiles * f.splits > std::numeric_limits<int32_t>::max()) {
    return "tokens or work units past 32 bits";
  }
  // The split grid's work-unit cursor (stream_k.h, WorkSchedule) stops at its last unit plus the
  // grid.
  if (!f.stream_k && tiles * f.splits - 1 + f.grid > std::numeric_limits<int32_t>::max()) {
    return "work-unit cursor past 32 bits";
  }
  if (f.copy_activations != (p.act_order || g.k % 8 != 0)) return "activation copy";
  if (f.copy_activations &&
      plan.workspace_bytes < f.activation_offset + size_t(p.m) * size_t(g.k_pad) * 2) {
    return "workspace below the activation copy";
  }
  if (f.stream_k &&
      plan.workspace_bytes < f.partials_offset + size_t(prefill::stream_k_slots(f.grid)) *
                                                     prefill::stream_k_slot_floats(f.tokens) * 4) {
    return "workspace below the Stream-K slots";
  }
  if (!f.stream_k && f.splits > 1 &&
      plan.workspace_bytes <
          f.partials_offset + size_t(f.splits) * g.n_pad * size_t(f.m_tiles) * f.tokens * 4) {
    return "workspace below the partials";
  }
  return "";
}

TEST(PrefillPlanInvariants, RandomProblemsGetPlansTheLauncherCanRun) {
  std::mt19937_64 rng(testing::test_seed());
  int planned = 0, refused = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    Problem p;
    if (!testing::random_problem(rng, &p)) continue;
    // The edges: past what the kernels' 32-bit tokens and work units hold.
    p.m = testing::random_m(rng, 2048, 200000,
                            {int64_t(1) << 30, (int64_t(1) << 30) + 1, int64_t(1) << 40});
    // Forced settings, in and out of range, as SAILFISH_PREFILL_* may give them.
    const std::optional<int64_t> tokens =
        maybe<int64_t>(rng, pick<int64_t>(rng, {8, 16, 24, 32, 64, 128, 256, 512}));
    const std::optional<int64_t> splits = maybe<int64_t>(rng, uniform(rng, 1, 20));
    const std::optional<int64_t> stages = maybe<int64_t>(rng, uniform(rng, 1, 18));
    const std::optional<bool> stream_k = maybe(rng, uniform(rng, 0, 1) == 1);

    Plan plan;
    plan.problem = p;
    plan.tier = Tier::kPrefill;
    plan.sm_count = 132;
    const Status st = prefill::plan_prefill(tokens, splits, stages, stream_k, &plan);
    const std::string what = testing::problem_name(p) + ", trial " + std::to_string(trial);
    if (!st.ok()) {
      // Refused: the message names the setting or limit at fault.
      ++refused;
      const std::string& message = st.message();
      const bool named = message.find("prefill_tokens") != std::string::npos ||
                         message.find("prefill_splits") != std::string::npos ||
                         message.find("prefill_stages") != std::string::npos ||
                         message.find("prefill_stream_k") != std::string::npos ||
                         message.find("too many tiles") != std::string::npos;
      EXPECT_TRUE(named) << what << ": " << st.to_string();
      continue;
    }
    ++planned;
    EXPECT_EQ(broken_condition(plan), "")
        << what << ": tokens " << plan.prefill.tokens << ", splits " << plan.prefill.splits
        << ", stages " << plan.prefill.stages << ", grid " << plan.prefill.grid << ", stream-k "
        << plan.prefill.stream_k;
  }
  std::printf("[ plans ] %d planned, %d refused with the setting named\n", planned, refused);
  EXPECT_GT(planned, 1500);  // about 60% of the draws: the rest force a setting out of range
}

// Batch-invariant plans (prefill/batch_invariant.h, what plan() does with
// Options::batch_invariant): on random shapes and formats, the width, split depth, stage count,
// grid form and activation copy are the same at every M, from one token to tens of thousands, and
// each plan is one the launcher can run.
TEST(PrefillPlanInvariants, BatchInvariantChoicesDoNotFollowM) {
  std::mt19937_64 rng(testing::test_seed() + 1);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Problem p;
    if (!testing::random_problem(rng, &p)) continue;
    const int tokens = prefill::kBatchInvariantTokens;
    const int splits = prefill::batch_invariant_splits(p.geometry, 132, tokens);
    const std::string what = testing::problem_name(p) + ", trial " + std::to_string(trial);
    PrefillPlan first;
    bool have_first = false;
    for (const int64_t m :
         {int64_t(1), int64_t(7), int64_t(64), int64_t(65), int64_t(1000), int64_t(30000)}) {
      Plan plan;
      plan.problem = p;
      plan.problem.m = m;
      plan.tier = Tier::kPrefill;
      plan.sm_count = 132;
      const Status st = prefill::plan_prefill(tokens, splits, std::nullopt, false, &plan);
      ASSERT_TRUE(st.ok()) << what << " m=" << m << ": " << st.to_string();
      EXPECT_EQ(broken_condition(plan), "") << what << " m=" << m;
      const PrefillPlan& f = plan.prefill;
      if (!have_first) {
        first = f;
        have_first = true;
        continue;
      }
      EXPECT_EQ(f.tokens, first.tokens) << what << " m=" << m;
      EXPECT_EQ(f.splits, first.splits) << what << " m=" << m;
      EXPECT_EQ(f.stages, first.stages) << what << " m=" << m;
      EXPECT_EQ(f.stream_k, first.stream_k) << what << " m=" << m;
      EXPECT_EQ(f.copy_activations, first.copy_activations) << what << " m=" << m;
    }
    EXPECT_FALSE(first.stream_k) << what;
    EXPECT_EQ(first.tokens, tokens) << what;
    EXPECT_EQ(first.splits, std::min<int64_t>(splits, p.geometry.k_blocks)) << what;
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace sailfish
