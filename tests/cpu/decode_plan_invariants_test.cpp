// The decode planner on random problems (decode/launch.cu, plan_decode, against the CPU model of
// the H200): any shape, format and forced choice gets a plan the launcher can run as it is, or an
// error that says why. "Can run" is what run_decode and the kernels take for granted: grid
// dimensions within CUDA's limits, a depth that splits the k-blocks, shared memory that holds the
// stages (and the push form's receive area) and fits a CTA, an instance one SM can hold, and a
// workspace that holds what the plan writes there. Fresh problems each run; the seed is printed,
// and SAILFISH_TEST_SEED replays one.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "decode/config.h"
#include "decode/launch.h"
#include "decode_gpu_model.h"
#include "launch_summary.h"
#include "random_problems.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::maybe;
using testing::pick;
using testing::uniform;

using decode::DecodeChoices;
using test::DecodeGpuModel;

// The launch conditions a plan must meet; returns the first one it breaks, or "".
std::string broken_condition(const Plan& plan, const DecodeGpuModel& model) {
  const Problem& p = plan.problem;
  const PackedGeometry& g = p.geometry;
  const DecodePlan& d = plan.decode;
  const int64_t m = std::max<int64_t>(p.m, 1);
  const int64_t tokens_per_cta = int64_t(d.token_tiles) * decode::kTokensPerTile;
  if (d.token_tiles != decode::token_tiles_for(std::min<int64_t>(m, 64))) return "token tiles";
  if (int64_t(d.m_groups) * tokens_per_cta < m || int64_t(d.m_groups - 1) * tokens_per_cta >= m) {
    return "m_groups do not cover M exactly";
  }
  if (d.m_groups > 65535) return "gridDim.z above 65535";
  if (d.splits < 1 || d.splits > std::max<int64_t>(1, g.k_blocks)) return "split depth";
  if (d.splits > 65535) return "gridDim.y above 65535";
  const auto epilogue = static_cast<decode::Epilogue>(d.epilogue);
  if (epilogue == decode::Epilogue::kCluster) {
    if (d.splits < 2 || d.splits > decode::kMaxClusterSplits) return "cluster of 2-8 splits";
    if (!d.warp_split) return "cluster epilogue without the warp-split kernel";
  }
  if (d.splits > 1 && epilogue == decode::Epilogue::kStore) return "splits stored unreduced";
  if (d.cluster_push && epilogue != decode::Epilogue::kCluster) return "push form off clusters";
  if (d.stream_k_strips > 0 && epilogue != decode::Epilogue::kCluster) {
    return "Stream-K off clusters";
  }
  if (d.warps != 4 && !(d.warps == 8 && d.warp_split && d.token_tiles == 1)) return "warps";
  if (d.shared_bytes <= 0 || d.shared_bytes > model.max_dynamic_smem) {
    return "shared memory above what a CTA may have";
  }
  if (d.warp_split) {
    const bool built =
        d.warp_stages == decode::kStages ||
        d.warp_stages == decode::warp_split_deep_stages(d.token_tiles) ||
        d.warp_stages == decode::warp_split_lighter_deep_stages(g.bits, d.token_tiles) ||
        (decode::warp_split_stages_vary(d.token_tiles) &&
         d.warp_stages == decode::kWarpSplitFewStages);
    if (!built) return "stage count no instance has";
    if (d.act_rows < 1 || d.act_rows > tokens_per_cta || d.act_rows < std::min(m, tokens_per_cta)) {
      return "activation rows a stage holds";
    }
    const int stages_bytes =
        d.warps * decode::warp_split_region_bytes(d.warp_stage_bytes, d.warp_stages);
    if (d.shared_bytes < stages_bytes) return "shared memory below the warps' stages";
    // The receive area lies past the warps' regions (warp_split_epilogue.cuh).
    if (d.cluster_push &&
        d.shared_bytes < stages_bytes + decode::cluster_receive_bytes(d.splits, d.token_tiles)) {
      return "shared memory below the stages and the push form's receive area";
    }
  }
  if (d.resident_ctas < 1) return "no CTA fits an SM";
  if (d.copy_activations &&
      plan.workspace_bytes < d.activation_offset + size_t(m) * size_t(g.k_pad) * 2) {
    return "workspace below the activation copy";
  }
  if (epilogue == decode::Epilogue::kPartials &&
      plan.workspace_bytes <
          d.partials_offset + size_t(d.splits) * d.m_groups * tokens_per_cta * g.n_pad * 4) {
    return "workspace below the partials";
  }
  if (epilogue != decode::Epilogue::kPartials && !d.copy_activations && plan.workspace_bytes != 0) {
    return "workspace asked for nothing";
  }
  return "";
}

TEST(DecodePlanInvariants, RandomProblemsGetPlansTheLauncherCanRun) {
  const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  ASSERT_FALSE(model.registers.empty());
  std::mt19937_64 rng(testing::test_seed());
  int planned = 0, refused = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    Problem p;
    if (!testing::random_problem(rng, &p)) continue;
    // The edges: what a grid's z dimension holds (65535 groups of 64 tokens), and past it.
    p.m = testing::random_m(rng, 64, 5000,
                            {decode::kDecodeMaxM - 1, decode::kDecodeMaxM, decode::kDecodeMaxM + 1,
                             int64_t(1) << 31, int64_t(1) << 40});
    DecodeChoices choices;
    choices.splits = maybe<int64_t>(rng, uniform(rng, 1, 20));
    choices.warp_stages = maybe<int64_t>(rng, uniform(rng, 2, 7));
    choices.stream_k = maybe(rng, uniform(rng, 0, 1) == 1);
    choices.stream_k_strips = maybe<int64_t>(rng, uniform(rng, 1, decode::kStreamKMaxStrips));
    choices.warp_split = uniform(rng, 0, 7) != 0;
    choices.cluster_reduce = uniform(rng, 0, 5) != 0;
    choices.cluster_push = maybe(rng, uniform(rng, 0, 1) == 1);
    choices.spread = maybe(rng, uniform(rng, 0, 1) == 1);
    choices.wide_warps = maybe(rng, uniform(rng, 0, 1) == 1);

    Plan plan;
    plan.problem = p;  // the model's queries keep a reference to the plan's own copy
    plan.tier = Tier::kDecode;
    plan.sm_count = model.sm_count;
    const Status st = decode::plan_decode(choices, model.queries(plan.problem), &plan);
    const std::string what = testing::problem_name(p) + ", trial " + std::to_string(trial);
    if (p.m > decode::kDecodeMaxM) {
      // Beyond the grid's z dimension: refused, saying what M the tier takes.
      EXPECT_FALSE(st.ok()) << what << ": " << bench::launch_summary(plan);
      EXPECT_NE(st.message().find(std::to_string(decode::kDecodeMaxM)), std::string::npos)
          << what << ": " << st.message();
      ++refused;
      continue;
    }
    if (!st.ok()) {
      ADD_FAILURE() << what << ": " << st.to_string();
      continue;
    }
    ++planned;
    const std::string broken = broken_condition(plan, model);
    EXPECT_EQ(broken, "") << what << ": " << bench::launch_summary(plan);
  }
  std::printf("[ plans ] %d planned, %d refused (M beyond the tier)\n", planned, refused);
  EXPECT_GT(planned, 2000);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace sailfish
