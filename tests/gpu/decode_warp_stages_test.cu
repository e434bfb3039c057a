// The decode tier's warp-split stages a warp (src/decode/config.h, plan_decode): forced counts
// against the float64 reference on every format, and the plan's own count where the rules decide
// it (three stages for multi-wave grids at M = 17-32, the deep pipeline for few CTAs and uneven
// grids, int8's lighter deep depth).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "decode_test_helpers.h"
#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::GemmCase;
using testing::decode_options;
using testing::device_has_clusters;
using testing::device_sm_count;
using testing::kEpilogueCluster;
using testing::kEpiloguePartials;

// Forced stages a warp of the warp-split kernel against the reference: every format, odd and
// aligned shapes and a K short enough that a warp has fewer blocks than stages, one split (the
// stages wrap around over many blocks) and three with either split epilogue.
struct ForcedStages {
  uint64_t seed_offset;
  std::vector<int64_t> ms;
  std::vector<int> stage_counts;
  std::function<int(int)> group_of;           // group size, by format index
  std::function<bool(int64_t)> bias_of;       // bias or not, by M
  std::function<int(const testing::WeightFormat&, int64_t, int)> expected;  // stages run
  std::function<bool(const testing::WeightFormat&)> takes_format;  // empty: every format
};

void check_forced_stages(const ForcedStages& t) {
  std::mt19937_64 rng(testing::test_seed() + t.seed_offset);
  const int64_t shapes[][2] = {{200, 1000}, {136, 4096}, {64, 128}};
  for (int format_index = 0; format_index < testing::kWeightFormatCount; ++format_index) {
    const testing::WeightFormat& f = testing::kWeightFormats[format_index];
    if (t.takes_format && !t.takes_format(f)) continue;
    const DType dtype = testing::format_test_dtype(format_index);
    const int group = t.group_of(format_index);
    for (const auto& shape : shapes) {
      const QuantizedWeight w = testing::random_weight(
          rng, testing::format_spec(f, shape[0], shape[1], group, format_index % 3 == 0, dtype));
      for (int64_t m : t.ms) {
        for (int stages : t.stage_counts) {
          for (int splits : {1, 3}) {
            for (bool cluster : {true, false}) {
              GemmCase c = testing::gemm_case(w, dtype, m, t.bias_of(m), decode_options());
              c.options.decode_warp_stages = stages;
              c.options.decode_splits = splits;
              c.options.decode_cluster_reduce = cluster;
              const auto r = testing::run_and_check(c, rng());
              const std::string where = std::string(f.name) + " n=" + std::to_string(shape[0]) +
                                        " k=" + std::to_string(shape[1]) +
                                        " g=" + std::to_string(group) +
                                        " m=" + std::to_string(m) +
                                        " stages=" + std::to_string(stages) +
                                        " splits=" + std::to_string(splits);
              EXPECT_TRUE(r.ok) << where << ": " << r.message;
              EXPECT_EQ(r.warp_stages, t.expected(f, m, stages)) << where;
            }
          }
        }
      }
    }
  }
}

// M 17-32 per CTA: 3 and 4 stages per warp (the plan picks per problem; forced here).
TEST(DecodeWarpStages, ThreeAndFourStagesMatchReference) {
  SF_SKIP_WITHOUT_GPU();
  check_forced_stages({208, {17, 24, 32}, {3, 4}, [](int) { return 128; },
                       [](int64_t) { return true; },
                       [](const testing::WeightFormat&, int64_t, int stages) { return stages; }});
}

// The plan's own stage choice at M = 32: four stages where the cluster epilogue runs, three
// otherwise (one split on a grid of several waves, as l3-70b.gate_up).
TEST(DecodeWarpStages, PlanPicksThreeStagesForManyWaves) {
  SF_SKIP_WITHOUT_GPU();
  Problem problem;
  problem.m = 32;
  ASSERT_TRUE(PackedGeometry::make(57344, 8192, 4, 128, &problem.geometry).ok());
  Plan plan;
  ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
  EXPECT_EQ(plan.decode.warp_stages, 3);
  EXPECT_EQ(plan.decode.splits, 1);
  ASSERT_TRUE(PackedGeometry::make(8192, 8192, 4, 128, &problem.geometry).ok());  // l3-70b.o
  ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
  if (device_has_clusters() && plan.decode.epilogue == kEpilogueCluster) {
    EXPECT_EQ(plan.decode.warp_stages, 4);
  } else {
    EXPECT_EQ(plan.decode.warp_stages, 3);
  }
  // Three stages never end on the reduce kernel: the plan keeps four stages then (l3-70b.o and
  // l3-70b.down at M = 17).
  for (const int64_t shape : {int64_t(8192), int64_t(28672)}) {
    ASSERT_TRUE(PackedGeometry::make(8192, shape, 4, 128, &problem.geometry).ok());
    for (int64_t m = 17; m <= 32; ++m) {
      problem.m = m;
      ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
      if (plan.decode.warp_stages == 3) {
        EXPECT_NE(plan.decode.epilogue, kEpiloguePartials) << "m=" << m << " k=" << shape;
      }
    }
  }
  // A forced count the kernel for that M is not built with is ignored: 3 below 17 tokens, 6 at
  // 17-32.
  problem.m = 1;
  Options forced = decode_options();
  forced.decode_warp_stages = 3;
  ASSERT_TRUE(sailfish::plan(problem, -1, forced, &plan).ok());
  EXPECT_NE(plan.decode.warp_stages, 3);
  forced.decode_warp_stages = 6;
  ASSERT_TRUE(sailfish::plan(problem, -1, forced, &plan).ok());
  EXPECT_EQ(plan.decode.warp_stages, 6);
  problem.m = 32;
  ASSERT_TRUE(sailfish::plan(problem, -1, forced, &plan).ok());
  EXPECT_TRUE(plan.decode.warp_stages == 3 || plan.decode.warp_stages == 4)
      << plan.decode.warp_stages;
}

// The plan's own stage choice at M = 1-16: the deep instance only where the four-stage plan's grid
// has no more CTAs than SMs (l3-8b.o, 64 strips x 2 splits), or where that plan ends on the reduce
// kernel and the deep one on the cluster epilogue; four stages on a grid of several CTAs an SM
// (l3-70b.gate_up, 896 strips).
TEST(DecodeWarpStages, PlanTakesTheDeepPipelineForFewCtas) {
  SF_SKIP_WITHOUT_GPU();
  const int sms = device_sm_count();
  ASSERT_GT(sms, 0);
  Problem problem;
  Plan plan;
  for (const int64_t m : {int64_t(1), int64_t(16)}) {
    problem.m = m;
    ASSERT_TRUE(PackedGeometry::make(57344, 8192, 4, 128, &problem.geometry).ok());
    ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
    EXPECT_EQ(plan.decode.warp_stages, 4) << "m=" << m;
    const int64_t shapes[][2] = {{4096, 4096}, {8192, 8192}, {6144, 4096}, {4096, 14336}};
    for (const auto& shape : shapes) {
      ASSERT_TRUE(PackedGeometry::make(shape[0], shape[1], 4, 128, &problem.geometry).ok());
      ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
      const std::string where = "n=" + std::to_string(shape[0]) + " k=" +
                                std::to_string(shape[1]) + " m=" + std::to_string(m);
      const int64_t ctas = problem.geometry.n_blocks * plan.decode.splits;
      const int deep = m == 1 ? 6 : 5;  // one token tile, or two (warp_split_instances.h)
      if (plan.decode.warp_stages == deep) {
        EXPECT_TRUE(ctas <= sms || plan.decode.epilogue == kEpilogueCluster) << where;
      } else {
        EXPECT_EQ(plan.decode.warp_stages, 4) << where;
      }
      if (shape[0] == 4096 && shape[1] == 4096 && sms >= 128) {
        EXPECT_EQ(plan.decode.warp_stages, deep) << where;  // 64 strips x 2 splits
      }
    }
  }
}

// The deep pipeline on an uneven grid, on an H100/H200-sized part: l3-8b.qkv (96 strips x 2
// splits = 192 CTAs, 60 SMs with two) takes six stages at M = 1 (int8: five, the lighter depth);
// l3-70b.qkv at M = 16 (320 CTAs, three on the busiest SMs) keeps four, since five stages hold
// two CTAs an SM and the grid would take a second wave.
TEST(DecodeWarpStages, PlanTakesTheDeepPipelineOnUnevenGrids) {
  SF_SKIP_WITHOUT_GPU();
  const int sms = device_sm_count();
  if (!device_has_clusters() || sms < 128 || sms > 144) {
    GTEST_SKIP() << "the measured plans are for an H100/H200-sized sm_90 part";
  }
  Problem problem;
  Plan plan;
  const int64_t cases[][5] = {// n, k, m, bits, stages
                              {6144, 4096, 1, 4, 6},
                              {6144, 4096, 1, 8, 5},
                              {10240, 8192, 16, 4, 4}};
  for (const auto& c : cases) {
    problem.m = c[2];
    ASSERT_TRUE(PackedGeometry::make(c[0], c[1], static_cast<int>(c[3]), 128, &problem.geometry)
                    .ok());
    ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
    const std::string where = "n=" + std::to_string(c[0]) + " k=" + std::to_string(c[1]) +
                              " m=" + std::to_string(c[2]) + " bits=" + std::to_string(c[3]);
    EXPECT_EQ(plan.decode.warp_stages, c[4]) << where;
    EXPECT_EQ(plan.decode.splits, 2) << where;
    EXPECT_EQ(plan.decode.epilogue, kEpilogueCluster) << where;
  }
}

// M 1-16 per CTA: 4 stages a warp and the deep-pipeline instance (6 at 1-8 tokens, one token
// tile; 5 at 9-16, int4 only, so a forced 5 runs 4 for int8 there). Group 16 on one format in
// three: the most scale rows (and folds) a stage holds.
TEST(DecodeWarpStages, DeepPipelineMatchesReference) {
  SF_SKIP_WITHOUT_GPU();
  const auto group_of = [](int format_index) { return format_index % 3 == 1 ? 16 : 128; };
  const auto bias_of = [](int64_t m) { return m % 2 == 0; };
  check_forced_stages({214, {1, 8}, {4, 6}, group_of, bias_of,
                       [](const testing::WeightFormat&, int64_t, int stages) { return stages; }});
  check_forced_stages({215, {9, 16}, {4, 5}, group_of, bias_of,
                       [](const testing::WeightFormat& f, int64_t, int stages) {
                         return f.bits == 8 ? 4 : stages;
                       }});
}

// int8 at 1-8 tokens also runs the lighter deep depth (5 stages a warp: config.h,
// warp_split_lighter_deep_stages), forced here on every int8 format, both types and group 16.
TEST(DecodeWarpStages, LighterDeepPipelineMatchesReference) {
  SF_SKIP_WITHOUT_GPU();
  const auto group_of = [](int format_index) { return format_index % 3 == 1 ? 16 : 128; };
  check_forced_stages({216, {1, 8}, {5}, group_of, [](int64_t m) { return m == 8; },
                       [](const testing::WeightFormat&, int64_t, int stages) { return stages; },
                       [](const testing::WeightFormat& f) { return f.bits == 8; }});
}

// The plan's lighter deep depth for int8 at one token tile, on an H100/H200-sized part (132 SMs,
// 228 KB of shared memory an SM): five stages on l3-70b.down and l3-70b.o at M = 1 (two CTAs an
// SM either way; six would keep 170 KiB in flight) and on l3-8b.o at M = 4 and 8 (six stages and
// the push area hold one CTA an SM, leaving no room for the next launch's); six on l3-8b.o at
// M = 1 and 2 (two fit). int4 never takes five at one tile.
TEST(DecodeWarpStages, PlanTakesTheLighterDeepDepthForInt8) {
  SF_SKIP_WITHOUT_GPU();
  const int sms = device_sm_count();
  int device = 0, shared_per_sm = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                   device),
            cudaSuccess);
  if (!device_has_clusters() || sms < 128 || sms > 144 || shared_per_sm != 228 * 1024) {
    GTEST_SKIP() << "the measured plans are for an H100/H200-sized sm_90 part";
  }
  Problem problem;
  Plan plan;
  const int64_t cases[][4] = {{8192, 28672, 1, 5}, {8192, 8192, 1, 5}, {4096, 4096, 1, 6},
                              {4096, 4096, 2, 6},  {4096, 4096, 4, 5}, {4096, 4096, 8, 5}};
  for (const auto& c : cases) {
    problem.m = c[2];
    ASSERT_TRUE(PackedGeometry::make(c[0], c[1], 8, 128, &problem.geometry).ok());
    ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
    const std::string where = "n=" + std::to_string(c[0]) + " k=" + std::to_string(c[1]) +
                              " m=" + std::to_string(c[2]);
    EXPECT_EQ(plan.decode.warp_stages, c[3]) << where;
    EXPECT_EQ(plan.decode.epilogue, kEpilogueCluster) << where;
    ASSERT_TRUE(PackedGeometry::make(c[0], c[1], 4, 128, &problem.geometry).ok());
    ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
    EXPECT_NE(plan.decode.warp_stages, 5) << where << " int4";
  }
  // fp16 has no bytes-in-flight budget: l3-70b.down at M = 1 keeps six stages; l3-8b.o at M = 8
  // still takes five for the room it leaves.
  problem.act_dtype = DType::kF16;
  problem.scale_dtype = DType::kF16;
  const int64_t fp16_cases[][4] = {{8192, 28672, 1, 6}, {4096, 4096, 8, 5}};
  for (const auto& c : fp16_cases) {
    problem.m = c[2];
    ASSERT_TRUE(PackedGeometry::make(c[0], c[1], 8, 128, &problem.geometry).ok());
    ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
    EXPECT_EQ(plan.decode.warp_stages, c[3]) << "fp16 n=" << c[0] << " m=" << c[2];
  }
}

}  // namespace
}  // namespace sailfish
