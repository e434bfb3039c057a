// The decode planner (decode/launch.cu, plan_decode) on the CPU: its device queries answered by a
// model of the H200 (decode_gpu_model.h) instead of CUDA's occupancy queries. First against the
// plans the bench recorded on the device, then the planner's mechanics on made-up answers.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "decode/config.h"
#include "decode/launch.h"
#include "decode_gpu_model.h"
#include "launch_summary.h"

namespace sailfish {
namespace {

using decode::DecodeChoices;
using decode::DeviceQueries;
using test::DecodeGpuModel;

Problem problem_of(int64_t n, int64_t k, int64_t m, int bits = 4, DType dtype = DType::kBF16) {
  Problem p;
  p.m = m;
  EXPECT_TRUE(PackedGeometry::make(n, k, bits, 128, &p.geometry).ok());
  p.act_dtype = p.scale_dtype = dtype;
  return p;
}

Status plan_with(const DeviceQueries& q, const Problem& problem, const DecodeChoices& choices,
                 Plan* plan) {
  plan->problem = problem;
  plan->tier = Tier::kDecode;
  plan->sm_count = 132;
  return decode::plan_decode(choices, q, plan);
}

Status plan_on(const DecodeGpuModel& model, const Problem& problem, const DecodeChoices& choices,
               Plan* plan) {
  plan->problem = problem;  // the queries keep a reference to the plan's own copy
  return plan_with(model.queries(plan->problem), problem, choices, plan);
}

// The bench's launch string up to the residency and shared memory it adds since stop 49, which the
// stored runs predate.
std::string before_resident(const std::string& launch) {
  const size_t at = launch.find(" resident=");
  return at == std::string::npos ? launch : launch.substr(0, at);
}

std::string launch_of(const Plan& plan) { return before_resident(bench::launch_summary(plan)); }

DecodeGpuModel h200() {
  DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  EXPECT_FALSE(model.registers.empty())
      << "no registers read from " << SAILFISH_DECODE_REGISTERS_JSON;
  return model;
}

// A recorded bench row: the weight's bits and activation type, the shape's name and M.
using RowKey = std::tuple<int, std::string, std::string, int64_t>;
struct RecordedRow {
  int64_t n = 0, k = 0;
  std::string launch, file;
};

// The decode rows of the stored final runs, a later file's row replacing an earlier one's: the
// plans the rules give now, as far as the device has run them. bits and dtype per file.
std::map<RowKey, RecordedRow> recorded_plans() {
  const struct {
    const char* file;
    int bits;
    const char* dtype;
  } runs[] = {
      {"decode_v47_final_auto_m1_64.json", 4, "bf16"},
      {"decode_v47_final_auto_m9_13.json", 4, "bf16"},
      {"decode_v47_final_router.json", 4, "bf16"},
      {"decode_v47_final_int8_m1_16.json", 8, "bf16"},
      {"decode_v50_final_int4.json", 4, "bf16"},  // v50: the wide instance
      {"decode_v50_final_int8.json", 8, "bf16"},
      {"decode_v51_final_int4.json", 4, "bf16"},  // v51: four clustered splits, padded
      {"decode_v51_final_fp16.json", 4, "fp16"},
  };
  std::map<RowKey, RecordedRow> rows;
  for (const auto& run : runs) {
    const std::string path = std::string(SAILFISH_PERF_DATA_DIR) + "/" + run.file;
    std::ifstream in(path);
    EXPECT_TRUE(in) << path;
    if (!in) continue;
    const nlohmann::json j = nlohmann::json::parse(in);
    for (const auto& row : j["rows"]) {
      if (row["tier"] != "decode" || row["status"] != "ok") continue;
      rows[{run.bits, run.dtype, row["shape"], row["M"]}] =
          RecordedRow{row["N"], row["K"], before_resident(row["launch"]), run.file};
    }
  }
  // v49 gave int8 14336 x 4096 at M = 16 two clustered splits padded to one CTA an SM
  // (data/decode_v49_int8_on.md); no final run has recorded that row since.
  rows[{8, "bf16", "l3-8b.down", 16}].launch =
      "warp_split tiles=2 m_groups=1 splits=2 epilogue=3 warp_stages=4 cluster_push=1 spread=1";
  rows[{8, "bf16", "l3-8b.down", 16}].file = "decode_v49_int8_on.md";
  return rows;
}

// The model against every recorded plan. Since v52 it reproduces all of them: the three it did
// not (few strips over long K at M = 8: q32.down, q3-32.down, g27.down, where the model had let 80
// clusters of three be resident at two CTAs an SM) came right with the device's measured cluster
// counts (decode_gpu_model.h, measured_clusters: 79).
TEST(DecodePlanModel, PlansOfTheLastDeviceRuns) {
  const DecodeGpuModel model = h200();
  const std::map<RowKey, RecordedRow> rows = recorded_plans();
  ASSERT_GE(rows.size(), 80u);
  int compared = 0;
  for (const auto& [key, row] : rows) {
    const auto& [bits, dtype, shape, m] = key;
    Plan plan;
    const Problem p = problem_of(row.n, row.k, m, bits,
                                 dtype == std::string("fp16") ? DType::kF16 : DType::kBF16);
    ASSERT_TRUE(plan_on(model, p, DecodeChoices{}, &plan).ok()) << shape << " M = " << m;
    const std::string where = shape + " M = " + std::to_string(m) + " int" + std::to_string(bits) +
                              " " + dtype + " (" + row.file + ")";
    EXPECT_EQ(launch_of(plan), row.launch) << where;
    ++compared;
  }
  EXPECT_GE(compared, 80);
}

// Forced depths (DecodeChoices::splits, SAILFISH_DECODE_SPLITS) against the plans the v51 depth
// probe recorded (data/decode_v51_depth_json.tar.xz: int4_f2_1.json, int4_f3_1.json; int4 bf16,
// M = 1). Five three-split rows (q32.down, q14.down, q3-32.down, g27.down, q32.o) were the model's
// one known gap until v52: padded to two CTAs an SM, 80 clusters of three do not all fit, which
// the GPC rule counted 84 and the device's measured table holds at 79.
TEST(DecodePlanModel, ForcedDepthsOfTheV51Probe) {
  const DecodeGpuModel model = h200();
  const struct {
    int splits;
    const char* shape;
    int64_t n, k;
    const char* launch;  // after "warp_split tiles=1 m_groups=1 "
  } rows[] = {
      {2, "q32.down", 5120, 27648, "splits=2 epilogue=3 warp_stages=4 cluster_push=1 warps=8"},
      {2, "q14.down", 5120, 13824, "splits=2 epilogue=3 warp_stages=6 cluster_push=1"},
      {2, "q3-32.down", 5120, 25600, "splits=2 epilogue=3 warp_stages=4 cluster_push=1 warps=8"},
      {2, "g27.down", 5376, 21504, "splits=2 epilogue=3 warp_stages=6 cluster_push=1"},
      {2, "ds.down", 7168, 18432, "splits=2 epilogue=3 warp_stages=4 cluster_push=1 spread=2"},
      {2, "q32.o", 5120, 5120, "splits=2 epilogue=3 warp_stages=6 cluster_push=1"},
      {2, "q32.qkv", 7168, 5120, "splits=2 epilogue=3 warp_stages=4 cluster_push=1 spread=2"},
      {2, "q7.down", 3584, 18944, "splits=2 epilogue=3 warp_stages=6 cluster_push=1 spread=1"},
      {2, "phi3.down", 3072, 8192, "splits=2 epilogue=3 warp_stages=6 cluster_push=1"},
      {2, "l3-70b.down", 8192, 28672, "splits=2 epilogue=3 warp_stages=4 cluster_push=1 warps=8"},
      {2, "l3-8b.down", 4096, 14336, "splits=2 epilogue=3 warp_stages=6 cluster_push=1"},
      {2, "l3-70b.o", 8192, 8192, "splits=2 epilogue=3 warp_stages=4 cluster_push=1 spread=2"},
      {3, "q32.down", 5120, 27648, "splits=3 epilogue=3 warp_stages=4 cluster_push=1"},
      {3, "q14.down", 5120, 13824, "splits=3 epilogue=3 warp_stages=4 cluster_push=1"},
      {3, "q3-32.down", 5120, 25600, "splits=3 epilogue=3 warp_stages=4 cluster_push=1"},
      {3, "g27.down", 5376, 21504, "splits=3 epilogue=3 warp_stages=4 cluster_push=1"},
      {3, "ds.down", 7168, 18432, "splits=3 epilogue=3 warp_stages=4 cluster_push=1 spread=3"},
      {3, "q32.o", 5120, 5120, "splits=3 epilogue=3 warp_stages=4 cluster_push=1"},
      {3, "q32.qkv", 7168, 5120, "splits=3 epilogue=3 warp_stages=4 cluster_push=1 spread=3"},
      {3, "q7.down", 3584, 18944, "splits=3 epilogue=3 warp_stages=6 cluster_push=1"},
      {3, "phi3.down", 3072, 8192, "splits=3 epilogue=3 warp_stages=6 cluster_push=1"},
      {3, "l3-70b.down", 8192, 28672, "splits=3 epilogue=3 warp_stages=4 cluster_push=1"},
      {3, "l3-8b.down", 4096, 14336, "splits=3 epilogue=3 warp_stages=6 cluster_push=1"},
      {3, "l3-70b.o", 8192, 8192, "splits=3 epilogue=3 warp_stages=4 cluster_push=1"},
  };
  for (const auto& row : rows) {
    DecodeChoices choices;
    choices.splits = row.splits;
    Plan plan;
    ASSERT_TRUE(plan_on(model, problem_of(row.n, row.k, 1), choices, &plan).ok()) << row.shape;
    const std::string device = std::string("warp_split tiles=1 m_groups=1 ") + row.launch;
    const std::string where =
        std::string(row.shape) + " at " + std::to_string(row.splits) + " splits";
    EXPECT_EQ(launch_of(plan), device) << where;
  }
}

// DecodePlan::resident_ctas is the occupancy of the plan as it is launched: its instance, warps
// and (padded) shared memory.
TEST(DecodePlanModel, ResidentCtasIsTheFinalPlansOccupancy) {
  const DecodeGpuModel model = h200();
  const struct {
    int64_t n, k, m;
  } cases[] = {{8192, 8192, 1},   {8192, 28672, 1}, {4096, 4096, 1}, {8192, 28672, 9},
               {57344, 8192, 16}, {3072, 8192, 1},  {32, 2880, 1},   {4096, 14336, 32}};
  for (const auto& c : cases) {
    Plan plan;
    const Problem p = problem_of(c.n, c.k, c.m);
    ASSERT_TRUE(plan_on(model, p, DecodeChoices{}, &plan).ok());
    int ctas = 0;
    ASSERT_TRUE(model.ctas_per_sm(plan.problem, plan.decode, &ctas).ok());
    const std::string where = std::to_string(c.n) + " x " + std::to_string(c.k) +
                              " M = " + std::to_string(c.m) + ": " + launch_of(plan);
    EXPECT_EQ(plan.decode.resident_ctas, ctas) << where;
    EXPECT_GE(ctas, 1) << where;
    if (plan.decode.spread_ctas > 0) EXPECT_EQ(ctas, plan.decode.spread_ctas) << where;
  }
}

// The spread padding (launch.cu, spread_over_sms): l3-70b.o at M = 1 is padded to two CTAs an SM
// by default (v46), never with spread off, and wherever an SM would hold more with it on.
TEST(DecodePlanModel, SpreadPadsToTheSharePlannedOrAsked) {
  const DecodeGpuModel model = h200();
  const Problem p = problem_of(8192, 8192, 1);
  Plan by_rule, never, always;
  ASSERT_TRUE(plan_on(model, p, DecodeChoices{}, &by_rule).ok());
  DecodeChoices off, on;
  off.spread = false;
  on.spread = true;
  ASSERT_TRUE(plan_on(model, p, off, &never).ok());
  ASSERT_TRUE(plan_on(model, p, on, &always).ok());
  EXPECT_EQ(by_rule.decode.splits, 2);
  EXPECT_EQ(by_rule.decode.spread_ctas, 2);
  EXPECT_EQ(never.decode.spread_ctas, 0);
  EXPECT_LT(never.decode.shared_bytes, by_rule.decode.shared_bytes);
  EXPECT_GT(never.decode.resident_ctas, 2);
  // Padded: two CTAs fit an SM and a third does not.
  const int per_cta = by_rule.decode.shared_bytes + model.reserved_smem_per_block;
  EXPECT_LE(2 * per_cta, model.smem_per_sm);
  EXPECT_GT(3 * per_cta, model.smem_per_sm);
  EXPECT_EQ(always.decode.spread_ctas, 2);

  // l3-70b.gate_up at M = 1: 896 CTAs, more than the SMs hold at once: nothing to pad.
  Plan full;
  ASSERT_TRUE(plan_on(model, problem_of(57344, 8192, 1), on, &full).ok());
  EXPECT_EQ(full.decode.spread_ctas, 0) << launch_of(full);
}

// The spread padding as the occupancy query answers it (launch.cu, spread_over_sms): where the
// padded CTA's occupancy comes out above the share (allocation granularity), 128 bytes more are
// tried, up to three times; where it still does, or where the padding took the SM below the share,
// the plan stays unpadded. l3-70b.o at M = 1, padded to two CTAs an SM by the rule.
TEST(DecodePlanModel, SpreadPaddingFollowsTheOccupancyQuery) {
  const DecodeGpuModel model = h200();
  const Problem p = problem_of(8192, 8192, 1);
  Plan padded, unpadded;
  ASSERT_TRUE(plan_on(model, p, DecodeChoices{}, &padded).ok());
  DecodeChoices off;
  off.spread = false;
  ASSERT_TRUE(plan_on(model, p, off, &unpadded).ok());
  ASSERT_EQ(padded.decode.spread_ctas, 2) << launch_of(padded);
  const int first = padded.decode.shared_bytes;
  // The query answers the model's count, except for padded plans of less than `least` bytes,
  // which it says hold `answer` CTAs.
  const auto plan_answering = [&](int least, int answer, Plan* plan) {
    plan->problem = p;
    DeviceQueries q = model.queries(plan->problem);
    const auto modelled = q.ctas_per_sm;
    q.ctas_per_sm = [modelled, least, answer](const DecodePlan& d, int* ctas) {
      if (d.spread_ctas > 0 && d.shared_bytes < least) {
        *ctas = answer;
        return Status();
      }
      return modelled(d, ctas);
    };
    return plan_with(q, plan->problem, DecodeChoices{}, plan);
  };
  for (int steps = 1; steps <= 4; ++steps) {
    Plan plan;
    ASSERT_TRUE(plan_answering(first + 128 * steps, 3, &plan).ok());
    const std::string where = std::to_string(steps) + " steps short: " + launch_of(plan);
    if (steps < 4) {
      EXPECT_EQ(plan.decode.spread_ctas, 2) << where;
      EXPECT_EQ(plan.decode.shared_bytes, first + 128 * steps) << where;
    } else {
      EXPECT_EQ(plan.decode.spread_ctas, 0) << where;
      EXPECT_EQ(plan.decode.shared_bytes, unpadded.decode.shared_bytes) << where;
    }
  }
  Plan below;
  ASSERT_TRUE(plan_answering(first + 1, 1, &below).ok());
  EXPECT_EQ(below.decode.spread_ctas, 0) << launch_of(below);
  EXPECT_EQ(below.decode.shared_bytes, unpadded.decode.shared_bytes) << launch_of(below);
}

// Without clusters (a GPU before sm_90, or clusters that never fit) the split plans end on the
// reduce kernel, and nothing takes the push form or Stream-K.
TEST(DecodePlanModel, NoClustersMeansTheReduceKernel) {
  const DecodeGpuModel model = h200();
  for (const bool before_sm90 : {true, false}) {
    Plan plan;
    plan.problem = problem_of(8192, 28672, 1);
    DeviceQueries q = model.queries(plan.problem);
    if (before_sm90) {
      q.compute_major = 8;
    } else {
      q.max_clusters = [](const DecodePlan&, int, int* clusters) {
        *clusters = 0;
        return Status();
      };
    }
    DecodeChoices choices;
    choices.stream_k = true;
    ASSERT_TRUE(plan_with(q, plan.problem, choices, &plan).ok());
    const DecodePlan& d = plan.decode;
    const std::string where = (before_sm90 ? "sm_80: " : "no cluster fits: ") + launch_of(plan);
    EXPECT_GT(d.splits, 1) << where;
    EXPECT_EQ(d.epilogue, static_cast<int>(decode::Epilogue::kPartials)) << where;
    EXPECT_FALSE(d.cluster_push) << where;
    EXPECT_EQ(d.stream_k_strips, 0) << where;
    EXPECT_GT(plan.workspace_bytes, 0u) << where << ": the partials need a workspace";
  }
}

// A forced depth is kept, up to the k-blocks there are; the wide instance is taken where asked
// and never where turned off.
TEST(DecodePlanModel, ForcedChoicesAreKept) {
  const DecodeGpuModel model = h200();
  const Problem short_k = problem_of(4096, 256, 1);  // four k-blocks
  for (const int64_t splits : {1, 3, 4, 8}) {
    DecodeChoices choices;
    choices.splits = splits;
    Plan plan;
    ASSERT_TRUE(plan_on(model, short_k, choices, &plan).ok());
    EXPECT_EQ(plan.decode.splits, std::min<int64_t>(splits, 4)) << launch_of(plan);
  }
  const Problem o = problem_of(8192, 8192, 1);
  for (const bool wide : {true, false}) {
    DecodeChoices choices;
    choices.wide_warps = wide;
    Plan plan;
    ASSERT_TRUE(plan_on(model, o, choices, &plan).ok());
    EXPECT_EQ(plan.decode.warps, wide ? 8 : 4) << launch_of(plan);
  }
}

// The wide instance keeps the clustered plan's clusters resident (launch.cu, choose_wide_warps):
// unasked, only where the wide CTAs hold as many of the grid's clusters at once as the four-warp
// plan did; asked, wherever at least one fits. l3-70b.down at M = 1, wide by the rule on the H200.
TEST(DecodePlanModel, WideWarpsKeepTheClustersResident) {
  const DecodeGpuModel model = h200();
  const Problem down = problem_of(8192, 28672, 1);
  Plan rule;
  ASSERT_TRUE(plan_on(model, down, DecodeChoices{}, &rule).ok());
  ASSERT_EQ(rule.decode.warps, 8) << launch_of(rule);
  ASSERT_EQ(rule.decode.epilogue, static_cast<int>(decode::Epilogue::kCluster)) << launch_of(rule);
  // The query answers the model's count, except for eight-warp plans, which it says hold
  // `answer` clusters at once.
  const auto plan_answering = [&](int answer, std::optional<bool> asked, Plan* plan) {
    plan->problem = down;
    DeviceQueries q = model.queries(plan->problem);
    const auto modelled = q.max_clusters;
    q.max_clusters = [modelled, answer](const DecodePlan& d, int size, int* clusters) {
      if (d.warps == 8) {
        *clusters = answer;
        return Status();
      }
      return modelled(d, size, clusters);
    };
    DecodeChoices choices;
    choices.wide_warps = asked;
    return plan_with(q, plan->problem, choices, plan);
  };
  Plan fewer, asked_fewer, none;
  ASSERT_TRUE(plan_answering(1, std::nullopt, &fewer).ok());
  EXPECT_EQ(fewer.decode.warps, 4) << "fewer clusters resident, unasked: " << launch_of(fewer);
  ASSERT_TRUE(plan_answering(1, true, &asked_fewer).ok());
  EXPECT_EQ(asked_fewer.decode.warps, 8) << "one cluster resident, asked: "
                                         << launch_of(asked_fewer);
  ASSERT_TRUE(plan_answering(0, true, &none).ok());
  EXPECT_EQ(none.decode.warps, 4) << "no cluster resident, asked: " << launch_of(none);
}

// The opt-in Stream-K grid takes the deep stage count where its grid is at most one CTA an SM and
// the deep plan keeps the same strips and cluster (launch.cu, choose_stream_k); where the deep
// stages would change the grid, or a count is forced, it keeps four.
TEST(DecodePlanModel, StreamKTakesDeepStagesOnlyWhereTheGridStays) {
  const DecodeGpuModel model = h200();
  const Problem o = problem_of(4096, 4096, 1);  // l3-8b.o: 64 strips, a grid of at most one wave
  DecodeChoices sk;
  sk.stream_k = true;
  Plan deep;
  ASSERT_TRUE(plan_on(model, o, sk, &deep).ok());
  ASSERT_GT(deep.decode.stream_k_strips, 0) << launch_of(deep);
  const int64_t ctas = (64 + deep.decode.stream_k_strips - 1) / deep.decode.stream_k_strips *
                       deep.decode.splits;
  ASSERT_LE(ctas, 132) << launch_of(deep);
  EXPECT_EQ(deep.decode.warp_stages, decode::warp_split_deep_stages(1)) << launch_of(deep);

  // The query says the deep instance holds no CTA an SM: no deep Stream-K plan, four stages.
  Plan four;
  four.problem = o;
  DeviceQueries q = model.queries(four.problem);
  const auto modelled = q.ctas_per_sm;
  q.ctas_per_sm = [modelled](const DecodePlan& d, int* ctas_per_sm) {
    if (d.stream_k_strips > 0 && d.warp_stages > decode::kStages) {
      *ctas_per_sm = 0;
      return Status();
    }
    return modelled(d, ctas_per_sm);
  };
  ASSERT_TRUE(plan_with(q, four.problem, sk, &four).ok());
  ASSERT_GT(four.decode.stream_k_strips, 0) << launch_of(four);
  EXPECT_EQ(four.decode.warp_stages, decode::kStages) << launch_of(four);

  // A forced count is kept.
  DecodeChoices forced = sk;
  forced.warp_stages = decode::kStages;
  Plan kept;
  ASSERT_TRUE(plan_on(model, o, forced, &kept).ok());
  ASSERT_GT(kept.decode.stream_k_strips, 0) << launch_of(kept);
  EXPECT_EQ(kept.decode.warp_stages, decode::kStages) << launch_of(kept);
}

// A failing query is the plan's error, not a plan made on a wrong count.
TEST(DecodePlanModel, AQueryFailureIsReturned) {
  const DecodeGpuModel model = h200();
  Plan plan;
  plan.problem = problem_of(8192, 8192, 1);
  DeviceQueries q = model.queries(plan.problem);
  q.ctas_per_sm = [](const DecodePlan&, int*) {
    return internal_error("occupancy query failed (made up)");
  };
  const Status st = plan_with(q, plan.problem, DecodeChoices{}, &plan);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("occupancy query failed (made up)"), std::string::npos)
      << st.message();

  // A cluster query failure too, where the plan asks it (a split plan at one token tile).
  Plan clustered;
  clustered.problem = problem_of(8192, 28672, 1);
  DeviceQueries cq = model.queries(clustered.problem);
  cq.max_clusters = [](const DecodePlan&, int, int*) {
    return internal_error("cluster query failed (made up)");
  };
  const Status cst = plan_with(cq, clustered.problem, DecodeChoices{}, &clustered);
  EXPECT_FALSE(cst.ok());
  EXPECT_NE(cst.message().find("cluster query failed (made up)"), std::string::npos)
      << cst.message();
}

}  // namespace
}  // namespace sailfish
