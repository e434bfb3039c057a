// plan_moe (src/moe/plan_moe.h) on the CPU model of the H200 (tests/model): the MoE layers of
// public models at decode and prefill batch sizes, and random ones, get plans the launcher can
// run (the MoE kernel instance, a grid CUDA takes, a split depth the cluster epilogue holds,
// shared memory that holds the stages, a workspace whose slabs hold what each step writes and do
// not overlap); malformed problems are refused with the reason.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "decode/config.h"
#include "decode_gpu_model.h"
#include "moe/moe_layers.h"
#include "moe/plan_moe.h"
#include "moe_plan_helpers.h"
#include "random_problems.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using test::DecodeGpuModel;
using testing::ScopedEnv;
using testing::uniform;

using testing::moe_problem;
using testing::plan_on_model;

// The first launch condition plan breaks, or "".
std::string broken_condition(const MoePlan& plan, const DecodeGpuModel& model) {
  const MoeProblem& p = plan.problem;
  const PackedGeometry& g = p.geometry;
  const DecodePlan& d = plan.gemm.decode;
  if (!d.moe || !d.warp_split || d.warps != decode::kWarpSplitWarps) return "MoE instance";
  if (!plan.gemm.programmatic_dependent_launch) return "programmatic dependent launch";
  if (!is_supported_moe_block_rows(plan.block_rows)) return "block rows";
  if (d.token_tiles * decode::kTokensPerTile != plan.block_rows) return "token tiles";
  if (plan.align.max_blocks !=
      moe_max_blocks(p.tokens, p.top_k, p.local_experts, plan.block_rows)) {
    return "align layout";
  }
  if (d.m_groups != plan.align.max_blocks || d.m_groups > 65535) return "grid z";
  if (plan.gemm.problem.m != plan.align.max_blocks * plan.block_rows) return "GEMM rows";
  if (d.splits < 1 || d.splits > decode::kMaxClusterSplits || d.splits > g.k_blocks) {
    return "split depth";
  }
  const auto epilogue = static_cast<decode::Epilogue>(d.epilogue);
  if ((d.splits == 1) != (epilogue == decode::Epilogue::kStore)) return "store without splits";
  if (d.splits > 1 && epilogue != decode::Epilogue::kCluster) return "splits off the cluster";
  if (d.cluster_push || d.stream_k_strips != 0 || d.spread_ctas != 0) return "split grid only";
  if (d.warp_stages != decode::kStages || d.act_rows != plan.block_rows) return "stages";
  if (d.shared_bytes <
          d.warps * decode::warp_split_region_bytes(d.warp_stage_bytes, d.warp_stages) ||
      d.shared_bytes > model.max_dynamic_smem) {
    return "shared memory";
  }
  if (d.resident_ctas < 1) return "no CTA fits an SM";
  if (d.splits > 1) {
    int clusters = 0;
    if (!model.max_clusters(plan.gemm.problem, d, d.splits, &clusters).ok() || clusters < 1) {
      return "clusters not resident";
    }
  }
  // The fused gather reads A's rows in place: whole 16-byte chunks (K a multiple of 8), whole
  // 64-column blocks in the lean loop of 4 token tiles, 32-bit element offsets into A.
  const int64_t input_rows = p.gemm.input == MoeInput::kToken ? p.tokens : p.tokens * p.top_k;
  const bool gather_fits =
      g.k % 8 == 0 && (d.token_tiles < 4 || g.k % 64 == 0) && input_rows * g.k < (int64_t(1) << 32);
  if (plan.fused_gather != gather_fits) return "fused gather";
  if (plan.fused_combine !=
      ((p.gemm.output == MoeOutput::kChoice || p.top_k == 1) && p.local_experts == p.experts)) {
    return "fused combine";
  }
  // Self-align: the ranking's scratch fits the stages, its slots sit past them, the grid is one
  // wave (every CTA ranks), within the limits the header names.
  const int stage_area =
      d.warps * decode::warp_split_region_bytes(d.warp_stage_bytes, d.warp_stages);
  if (plan.self_align) {
    const int64_t choices = p.tokens * p.top_k;
    if (!plan.fused_gather || choices > kMoeSelfAlignMaxChoices ||
        p.local_experts > kMoeSelfAlignMaxExperts) {
      return "self-align limits";
    }
    if (4 * (p.local_experts + choices) + 64 > stage_area) return "self-align scratch";
    if (d.shared_bytes < stage_area + 4 * (plan.block_rows + 1)) return "self-align slots";
    if (g.n_blocks * d.splits * d.m_groups > int64_t(model.sm_count) * d.resident_ctas) {
      return "self-align past one wave";
    }
  }
  const size_t rows = static_cast<size_t>(plan.gemm.problem.m);
  const size_t act = dtype_bytes(p.act_dtype);
  if (plan.align_offset % 256 || plan.gathered_offset % 256 || plan.products_offset % 256) {
    return "workspace alignment";
  }
  const size_t gathered = plan.fused_gather ? 0 : rows * g.k_pad * act;
  const size_t products = plan.fused_combine ? 0 : rows * g.n * act;
  if (plan.gathered_offset < plan.align_offset + plan.align.bytes ||
      plan.products_offset < plan.gathered_offset + gathered ||
      plan.workspace_bytes < plan.products_offset + products) {
    return "workspace slabs overlap or fall short";
  }
  // No more workspace than the steps that run write (each slab rounded up to 256 bytes).
  if (plan.workspace_bytes > plan.align.bytes + gathered + products + 3 * 256) {
    return "workspace larger than the steps need";
  }
  return "";
}

TEST(MoePlan, PublicLayersAtDecodeAndPrefillSizesAndEveryBlockSize) {
  const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  ASSERT_FALSE(model.registers.empty());
  for (const bench::MoeLayer& layer : bench::kMoeLayers) {
    for (int64_t tokens : {1, 2, 8, 16, 64, 256, 2048}) {
      for (int bits : {4, 8}) {
        const MoeProblem gate =
            moe_problem(tokens, layer.top_k, layer.experts, layer.experts, 2 * layer.intermediate,
                        layer.hidden, bits, ZeroPointKind::kNone, DType::kBF16,
                        {MoeInput::kToken, MoeOutput::kChoice, false});
        MoeProblem down = gate;
        ASSERT_TRUE(
            PackedGeometry::make(layer.hidden, layer.intermediate, bits, 128, &down.geometry).ok());
        down.gemm = {MoeInput::kChoice, MoeOutput::kTokenSum, true};
        // The rule's block rows, and each forced size (the block-rows probe's variants,
        // scripts/perf/moe_block_rows_probe.sh).
        for (const MoeProblem* p : {&gate, static_cast<const MoeProblem*>(&down)}) {
          for (const int forced : {0, 8, 16, 32}) {
            MoeOptions options;
            if (forced != 0) options.block_rows = forced;
            MoePlan plan;
            const std::string what = std::string(layer.name) + ", tokens " +
                                     std::to_string(tokens) + ", int" + std::to_string(bits) +
                                     (p == &gate ? ", gate_up" : ", down") +
                                     (forced != 0 ? ", block rows " + std::to_string(forced) : "");
            const Status st = plan_on_model(model, *p, options, &plan);
            ASSERT_TRUE(st.ok()) << what << ": " << st.to_string();
            EXPECT_EQ(broken_condition(plan, model), "") << what << ": " << plan.reason;
            // The planned depth's clusters, one a (strip, expected block), are all resident.
            const DecodePlan& d = plan.gemm.decode;
            if (d.splits > 1) {
              int clusters = 0;
              ASSERT_TRUE(model.max_clusters(plan.gemm.problem, d, d.splits, &clusters).ok());
              const int64_t expected = std::min(
                  plan.align.max_blocks,
                  moe_expected_blocks(p->tokens * p->top_k, p->local_experts, plan.block_rows));
              EXPECT_GE(clusters, p->geometry.n_blocks * expected) << what << ": " << plan.reason;
            }
            if (forced != 0) EXPECT_EQ(plan.block_rows, forced) << what;
          }
        }
      }
    }
  }
}

// Mixtral 8x7B down at one token: 64 strips x 2 blocks of 224 k-blocks. Four splits' clusters of
// four are not all resident (they ran 27.0 us on the H200); the plan takes a depth whose clusters
// are (two splits ran 22.9, docs/perf/moe.md v3 probe).
TEST(MoePlan, SplitClustersOfTheExpectedBlocksAreAllResident) {
  const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  MoeProblem p = moe_problem(1, 2, 8, 8, 4096, 14336, 4, ZeroPointKind::kNone, DType::kBF16,
                             {MoeInput::kChoice, MoeOutput::kTokenSum, true});
  MoePlan plan;
  ASSERT_TRUE(plan_on_model(model, p, {}, &plan).ok());
  EXPECT_GE(plan.gemm.decode.splits, 2) << plan.reason;
  EXPECT_LT(plan.gemm.decode.splits, 4) << plan.reason;
  std::printf("mixtral down, one token: %s\n", plan.reason.c_str());
  MoeOptions forced;
  forced.splits = 4;  // a forced depth needs only one resident cluster
  ASSERT_TRUE(plan_on_model(model, p, forced, &plan).ok());
  EXPECT_EQ(plan.gemm.decode.splits, 4) << plan.reason;
}

TEST(MoePlan, DefaultBlockRowsFollowTheRowsAnExpert) {
  EXPECT_EQ(moe_block_rows_for(0, 8), 8);
  EXPECT_EQ(moe_block_rows_for(8, 128), 8);  // one token, top 8 of 128: a row an expert
  EXPECT_EQ(moe_block_rows_for(64, 8), 8);   // 8 rows an expert
  EXPECT_EQ(moe_block_rows_for(65, 8), 16);
  EXPECT_EQ(moe_block_rows_for(256, 8), 32);
  EXPECT_EQ(moe_block_rows_for(100000, 8), 32);  // past 32 rows an expert: still 32
  // A large expert (kMoeWideBlockExpertBytes of codes or more) at 8 average rows takes 16; below
  // that size, at 7 rows or at 9 (already 16), the rule is the plain one.
  constexpr int64_t kLarge = kMoeWideBlockExpertBytes;
  EXPECT_EQ(moe_block_rows_for(2048, 256, kLarge), 16);  // DeepSeek-V3, 256 tokens: 8 rows
  EXPECT_EQ(moe_block_rows_for(1793, 256, kLarge), 16);  // 7.004: ceil 8
  EXPECT_EQ(moe_block_rows_for(1792, 256, kLarge), 8);   // 7 rows
  EXPECT_EQ(moe_block_rows_for(2048, 256, kLarge - 1), 8);
  EXPECT_EQ(moe_block_rows_for(2048, 256), 8);  // size unknown
  EXPECT_EQ(moe_block_rows_for(2049, 256, kLarge), 16);
  EXPECT_EQ(moe_block_rows_for(256, 8, kLarge), 32);
  EXPECT_EQ(moe_block_rows_for(8, 128, kLarge), 8);
  EXPECT_EQ(moe_expected_blocks(8, 128, 8), 8);
  EXPECT_EQ(moe_expected_blocks(64, 8, 8), 8);
  EXPECT_EQ(moe_expected_blocks(65, 8, 16), 8);
  EXPECT_EQ(moe_expected_blocks(256, 8, 16), 16);
  EXPECT_EQ(moe_expected_blocks(0, 8, 16), 0);
}

// plan_moe passes the expert's code bytes to the rule: the block-rows probe's layers at 8 average
// rows (docs/perf/moe.md) take 16-row blocks where an expert is large, 8 where small.
TEST(MoePlan, LargeExpertsAtEightRowsTakeSixteenRowBlocks) {
  const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  struct Case {
    const char* layer;
    int64_t tokens, n, k;
    int bits, top_k, experts, block_rows;
  } cases[] = {
      {"deepseek-v3 gate_up (14 MiB)", 256, 4096, 7168, 4, 8, 256, 16},
      {"deepseek-v3 down (7 MiB)", 256, 7168, 2048, 4, 8, 256, 16},
      {"deepseek-v3 down, 7 rows", 224, 7168, 2048, 4, 8, 256, 8},
      {"mixtral-8x7b gate_up (56 MiB)", 32, 28672, 4096, 4, 2, 8, 16},
      {"gpt-oss-120b down (3.96 MiB)", 256, 2880, 2880, 4, 4, 128, 8},
      {"gpt-oss-120b down int8 (7.9 MiB)", 256, 2880, 2880, 8, 4, 128, 16},
      {"qwen3-30b-a3b gate_up (1.5 MiB)", 128, 1536, 2048, 4, 8, 128, 8},
  };
  for (const Case& c : cases) {
    const MoeProblem p =
        moe_problem(c.tokens, c.top_k, c.experts, c.experts, c.n, c.k, c.bits, ZeroPointKind::kNone,
                    DType::kBF16, {MoeInput::kToken, MoeOutput::kChoice, false});
    MoePlan plan;
    ASSERT_TRUE(plan_on_model(model, p, {}, &plan).ok()) << c.layer;
    EXPECT_EQ(plan.block_rows, c.block_rows) << c.layer << ": " << plan.reason;
    const bool widened = c.block_rows == 16;
    EXPECT_EQ(plan.reason.find("8 average rows on a large expert") != std::string::npos, widened)
        << c.layer << ": " << plan.reason;
  }
}

TEST(MoePlan, RandomProblemsGetPlansTheLauncherCanRun) {
  const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  ASSERT_FALSE(model.registers.empty());
  std::mt19937_64 rng(testing::test_seed());
  int planned = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    const int experts = static_cast<int>(uniform(rng, 1, 300));
    const int top_k = static_cast<int>(uniform(rng, 1, std::min(experts, 10)));
    const int local = static_cast<int>(uniform(rng, 1, experts));
    const MoeProblem p = moe_problem(
        uniform(rng, 0, 3000), top_k, experts, local, testing::random_dimension(rng),
        testing::random_dimension(rng), uniform(rng, 0, 1) ? 4 : 8,
        uniform(rng, 0, 1) ? ZeroPointKind::kNone : ZeroPointKind::kInteger,
        uniform(rng, 0, 1) ? DType::kF16 : DType::kBF16,
        {uniform(rng, 0, 1) ? MoeInput::kToken : MoeInput::kChoice,
         uniform(rng, 0, 1) ? MoeOutput::kChoice : MoeOutput::kTokenSum, uniform(rng, 0, 1) == 1});
    MoeOptions options;
    if (uniform(rng, 0, 3) == 0) options.block_rows = kMoeBlockRowChoices[uniform(rng, 0, 2)];
    if (uniform(rng, 0, 3) == 0) options.splits = uniform(rng, 1, 8);
    MoePlan plan;
    const std::string what = "trial " + std::to_string(trial) + ": tokens " +
                             std::to_string(p.tokens) + ", top " + std::to_string(top_k) + " of " +
                             std::to_string(experts) + ", " + std::to_string(p.geometry.n) + " x " +
                             std::to_string(p.geometry.k);
    const Status st = plan_on_model(model, p, options, &plan);
    if (!st.ok()) {
      // Only a grid past 65535 blocks may be refused.
      EXPECT_EQ(st.code(), StatusCode::kUnsupported) << what << ": " << st.to_string();
      EXPECT_NE(st.message().find("65535"), std::string::npos) << what << ": " << st.message();
      continue;
    }
    ++planned;
    EXPECT_EQ(broken_condition(plan, model), "") << what << ": " << plan.reason;
  }
  EXPECT_GT(planned, 1000);
}

// A device whose clusters hold at most two CTAs: a deeper split shrinks to what is resident; a
// device without clusters (before sm_90) takes no split.
TEST(MoePlan, SplitsShrinkToClustersTheDeviceHolds) {
  const MoeProblem p = moe_problem(1, 2, 8, 8, 256, 4096, 4, ZeroPointKind::kNone, DType::kBF16,
                                   {MoeInput::kChoice, MoeOutput::kTokenSum, true});
  decode::DeviceQueries q;
  q.compute_major = 9;
  q.smem_per_sm = 233472;
  q.reserved_smem_per_block = 1024;
  std::vector<int> asked;
  q.ctas_per_sm = [](const DecodePlan& d, int* ctas) {
    *ctas = d.moe ? 2 : 0;  // only the MoE instance is asked for
    return Status();
  };
  q.max_clusters = [&asked](const DecodePlan& d, int size, int* clusters) {
    asked.push_back(size);
    *clusters = d.moe && size <= 2 ? 16 : 0;
    return Status();
  };
  MoeOptions six;
  six.splits = 6;
  MoePlan plan;
  ASSERT_TRUE(moe::plan_moe(p, q, 0, 132, six, &plan).ok());
  EXPECT_EQ(plan.gemm.decode.splits, 2);
  EXPECT_EQ(plan.gemm.decode.epilogue, static_cast<int>(decode::Epilogue::kCluster));
  EXPECT_EQ(asked, (std::vector<int>{6, 5, 4, 3, 2}));
  q.compute_major = 8;
  ASSERT_TRUE(moe::plan_moe(p, q, 0, 132, six, &plan).ok());
  EXPECT_EQ(plan.gemm.decode.splits, 1);
  EXPECT_EQ(plan.gemm.decode.epilogue, static_cast<int>(decode::Epilogue::kStore));
}

// Self-align's slots (256 bytes past the stages) are kept only where the SM still holds as many
// CTAs with them, and, on a split grid, a cluster of them still fits; otherwise the plan keeps the
// align kernel and its shared memory stays the stages'.
TEST(MoePlan, SelfAlignSlotsOnlyWhereTheSmHoldsAsMany) {
  const MoeProblem p = moe_problem(1, 2, 8, 8, 256, 4096, 4, ZeroPointKind::kNone, DType::kBF16,
                                   {MoeInput::kToken, MoeOutput::kChoice, false});
  const auto stage_area = [](const DecodePlan& d) {
    return d.warps * decode::warp_split_region_bytes(d.warp_stage_bytes, d.warp_stages);
  };
  for (const bool slots_cost_a_cta : {false, true}) {
    decode::DeviceQueries q;
    q.compute_major = 9;
    q.smem_per_sm = 233472;
    q.reserved_smem_per_block = 1024;
    q.ctas_per_sm = [&](const DecodePlan& d, int* ctas) {
      *ctas = slots_cost_a_cta && d.shared_bytes > stage_area(d) ? 2 : 3;
      return Status();
    };
    q.max_clusters = [](const DecodePlan&, int, int* clusters) {
      *clusters = 16;
      return Status();
    };
    MoeOptions one;
    one.splits = 1;
    MoePlan plan;
    ASSERT_TRUE(moe::plan_moe(p, q, 0, 132, one, &plan).ok());
    const DecodePlan& d = plan.gemm.decode;
    EXPECT_EQ(plan.self_align, !slots_cost_a_cta) << plan.reason;
    EXPECT_EQ(d.shared_bytes, stage_area(d) + (slots_cost_a_cta ? 0 : 256)) << plan.reason;
    EXPECT_EQ(d.resident_ctas, 3) << plan.reason;
  }
  // Asked for on a split grid: only where a cluster of the split CTAs fits with the slots.
  for (const bool cluster_fits : {true, false}) {
    decode::DeviceQueries q;
    q.compute_major = 9;
    q.smem_per_sm = 233472;
    q.reserved_smem_per_block = 1024;
    q.ctas_per_sm = [](const DecodePlan&, int* ctas) {
      *ctas = 3;
      return Status();
    };
    q.max_clusters = [&](const DecodePlan& d, int, int* clusters) {
      *clusters = !cluster_fits && d.shared_bytes > stage_area(d) ? 0 : 16;
      return Status();
    };
    MoeOptions two;
    two.splits = 2;
    two.self_align = true;
    MoePlan plan;
    ASSERT_TRUE(moe::plan_moe(p, q, 0, 132, two, &plan).ok());
    EXPECT_EQ(plan.gemm.decode.splits, 2) << plan.reason;
    EXPECT_EQ(plan.self_align, cluster_fits) << plan.reason;
    EXPECT_EQ(plan.gemm.decode.shared_bytes,
              stage_area(plan.gemm.decode) + (cluster_fits ? 256 : 0))
        << plan.reason;
  }
}

TEST(MoePlan, MalformedProblemsAreRefusedWithTheReason) {
  const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  const MoeGemm gemm;
  const MoeProblem good =
      moe_problem(4, 2, 8, 8, 256, 256, 4, ZeroPointKind::kNone, DType::kBF16, gemm);
  MoePlan plan;
  ASSERT_TRUE(plan_on_model(model, good, {}, &plan).ok());
  struct Case {
    const char* what;
    MoeProblem problem;
    MoeOptions options;
    const char* message;
  };
  MoeProblem top_k = good;
  top_k.top_k = 9;
  MoeProblem local = good;
  local.local_experts = 9;
  MoeProblem dtype = good;
  dtype.scale_dtype = DType::kF16;
  MoeProblem f32 = good;
  f32.act_dtype = f32.scale_dtype = DType::kF32;
  MoeProblem geometry = good;
  geometry.geometry.n_pad = 64;
  MoeOptions block;
  block.block_rows = 64;
  MoeOptions splits;
  splits.splits = 9;
  MoeProblem huge = good;  // 65536 blocks and more
  huge.tokens = 70000;
  huge.top_k = 8;
  huge.experts = huge.local_experts = 8;
  MoeOptions eight;
  eight.block_rows = 8;
  const Case cases[] = {
      {"top_k above experts", top_k, {}, "1 <= top_k <= experts"},
      {"more local experts than experts", local, {}, "9 local experts of 8"},
      {"scales of another type", dtype, {}, "packed for the activation type"},
      {"fp32 activations", f32, {}, "accepted: fp16, bf16"},
      {"geometry not made", geometry, {}, "not PackedGeometry::make's"},
      {"block rows 64", good, block, "block_rows is 64; accepted: 8, 16 or 32"},
      {"splits 9", good, splits, "splits is 9; accepted: 1 to 8"},
      {"too many blocks", huge, eight, "at most 65535"},
  };
  for (const Case& c : cases) {
    const Status st = plan_on_model(model, c.problem, c.options, &plan);
    EXPECT_FALSE(st.ok()) << c.what;
    EXPECT_NE(st.message().find(c.message), std::string::npos) << c.what << ": " << st.message();
  }
}

// SAILFISH_MOE_BLOCK_ROWS and SAILFISH_MOE_SPLITS fill unset options; set options win; malformed
// values are errors that name the variable.
TEST(MoePlan, OptionsFromTheEnvironment) {
  MoeOptions r;
  ASSERT_TRUE(moe::resolve_options({}, &r).ok());
  EXPECT_FALSE(r.block_rows.has_value());
  EXPECT_FALSE(r.splits.has_value());
  EXPECT_EQ(r.fuse, true);
  EXPECT_FALSE(r.self_align.has_value());  // plan_moe's rule
  EXPECT_EQ(r.programmatic_dependent_launch, true);
  {
    ScopedEnv fuse("SAILFISH_MOE_FUSE", "0");
    ScopedEnv pdl("SAILFISH_PDL", "0");
    ScopedEnv self("SAILFISH_MOE_SELF_ALIGN", "0");
    ASSERT_TRUE(moe::resolve_options({}, &r).ok());
    EXPECT_EQ(r.fuse, false);
    EXPECT_EQ(r.self_align, false);
    EXPECT_EQ(r.programmatic_dependent_launch, false);
    MoeOptions set;
    set.fuse = true;
    ASSERT_TRUE(moe::resolve_options(set, &r).ok());
    EXPECT_EQ(r.fuse, true);  // a set field wins over the environment
    // The plan follows the options: four launches, none overlapping.
    const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
    const MoeProblem p = moe_problem(1, 8, 128, 128, 1536, 2048, 4, ZeroPointKind::kNone,
                                     DType::kBF16, {MoeInput::kToken, MoeOutput::kChoice, true});
    MoePlan plan;
    ASSERT_TRUE(moe::resolve_options({}, &r).ok());
    ASSERT_TRUE(plan_on_model(model, p, r, &plan).ok());
    EXPECT_FALSE(plan.fused_gather);
    EXPECT_FALSE(plan.fused_combine);
    EXPECT_FALSE(plan.gemm.programmatic_dependent_launch);
    EXPECT_GE(plan.workspace_bytes, plan.products_offset + size_t(8 * 8 * 1536 * 2));
    EXPECT_FALSE(plan.self_align);
    ASSERT_TRUE(plan_on_model(model, p, {}, &plan).ok());
    EXPECT_TRUE(plan.fused_gather);
    EXPECT_TRUE(plan.fused_combine);
    EXPECT_TRUE(plan.self_align);  // one token, top 8 of 128: 24 strips x 8 blocks, one wave
    EXPECT_TRUE(plan.gemm.programmatic_dependent_launch);
    MoeOptions aligned;
    aligned.self_align = false;
    ASSERT_TRUE(plan_on_model(model, p, aligned, &plan).ok());
    EXPECT_TRUE(plan.fused_gather);
    EXPECT_FALSE(plan.self_align);
    // Split K keeps the align launch unless self-align is asked for.
    MoeProblem down = p;
    down.gemm = {MoeInput::kChoice, MoeOutput::kTokenSum, true};
    ASSERT_TRUE(PackedGeometry::make(4096, 14336, 4, 128, &down.geometry).ok());  // Mixtral down
    down.tokens = 1;
    down.top_k = 2;
    down.experts = down.local_experts = 8;
    ASSERT_TRUE(plan_on_model(model, down, {}, &plan).ok());
    ASSERT_GT(plan.gemm.decode.splits, 1) << plan.reason;
    EXPECT_FALSE(plan.self_align);
    MoeOptions asked;
    asked.self_align = true;
    ASSERT_TRUE(plan_on_model(model, down, asked, &plan).ok());
    EXPECT_TRUE(plan.self_align) << plan.reason;
    // 64 tokens: up to 176 blocks of 24 strips, several waves; the align launch stays.
    MoeProblem wide = p;
    wide.tokens = 64;
    ASSERT_TRUE(plan_on_model(model, wide, {}, &plan).ok());
    EXPECT_FALSE(plan.self_align);
  }
  {
    ScopedEnv block("SAILFISH_MOE_BLOCK_ROWS", "16");
    ScopedEnv splits("SAILFISH_MOE_SPLITS", "3");
    ASSERT_TRUE(moe::resolve_options({}, &r).ok());
    EXPECT_EQ(r.block_rows, 16);
    EXPECT_EQ(r.splits, 3);
    MoeOptions set;
    set.block_rows = 32;
    set.splits = 1;
    ASSERT_TRUE(moe::resolve_options(set, &r).ok());
    EXPECT_EQ(r.block_rows, 32);
    EXPECT_EQ(r.splits, 1);
  }
  const std::pair<const char*, const char*> bad[] = {
      {"SAILFISH_MOE_BLOCK_ROWS", "12"},      {"SAILFISH_MOE_BLOCK_ROWS", "64"},
      {"SAILFISH_MOE_BLOCK_ROWS", "sixteen"}, {"SAILFISH_MOE_SPLITS", "9"},
      {"SAILFISH_MOE_SPLITS", "0"},           {"SAILFISH_MOE_FUSE", "yes please"},
      {"SAILFISH_MOE_SELF_ALIGN", "2"}};
  for (const auto& [name, value] : bad) {
    ScopedEnv env(name, value);
    const Status st = moe::resolve_options({}, &r);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << name << "=" << value;
    EXPECT_NE(st.message().find(name), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace sailfish
