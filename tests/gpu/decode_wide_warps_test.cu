// The decode tier's wide instance (Options::decode_wide_warps; src/decode/launch.cu,
// choose_wide_warps): eight warps a warp-split CTA at one token tile, each streaming half the
// k-blocks four would, on the same grid. The cross-warp sum then adds eight warps' sums (warps 4-7
// own no fragment), so the results differ from four warps' in rounding only: each launch must
// match the float64 reference, be bitwise stable run to run, and really run wide where asked.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <string>

#include "decode/config.h"
#include "decode_test_helpers.h"
#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::GemmCase;
using testing::decode_options;
using testing::device_has_clusters;

// Every format, odd and aligned shapes, M = 1 and 8, the plan's split depth and, in turn, forced
// clustered splits (push and barrier forms), the reduce kernel's partials and deterministic mode.
TEST(DecodeWideWarps, ForcedWideMatchesTheReferenceInEveryFormAndEpilogue) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 311);
  const int64_t shapes[][2] = {{200, 1000}, {4096, 1024}, {129, 8256}};
  int wide = 0;
  for (int format_index = 0; format_index < testing::kWeightFormatCount; ++format_index) {
    const testing::WeightFormat& f = testing::kWeightFormats[format_index];
    const DType dtype = testing::format_test_dtype(format_index);
    for (int shape_index = 0; shape_index < 3; ++shape_index) {
      const auto& shape = shapes[shape_index];
      const int group = format_index % 3 == 2 ? 32 : 128;
      const QuantizedWeight w = testing::random_weight(
          rng, testing::format_spec(f, shape[0], shape[1], group, format_index == 1, dtype));
      for (int64_t m : {int64_t(1), int64_t(8)}) {
        const int turn = 1 + (format_index + shape_index + static_cast<int>(m)) % 4;
        for (int variant : {0, turn}) {
          GemmCase c = testing::gemm_case(w, dtype, m, m % 2 == 1,
                                          decode_options(/*deterministic=*/variant == 4));
          c.options.decode_wide_warps = true;
          c.repeats = 2;
          if (variant == 1 || variant == 2) {
            if (!device_has_clusters()) continue;
            c.options.decode_splits = variant == 1 ? 2 : 3;
            c.options.decode_cluster_push = variant == 1;
          }
          if (variant == 3) {
            c.options.decode_splits = 3;
            c.options.decode_cluster_reduce = false;  // fp32 partials and the reduce kernel
          }
          const std::string where = std::string(f.name) + " n=" + std::to_string(shape[0]) +
                                    " k=" + std::to_string(shape[1]) + " m=" +
                                    std::to_string(m) + " variant=" + std::to_string(variant);
          const auto r = testing::run_and_check(c, rng());
          ASSERT_TRUE(r.ok) << where << ": " << r.message;
          EXPECT_TRUE(r.bitwise_stable) << where;
          ASSERT_TRUE(r.warp_split) << where;
          // Wide wherever it fits: the split grid at one token tile. A plan the wide CTA does
          // not fit (or no cluster of it) keeps four warps.
          EXPECT_TRUE(r.warps == decode::kWarpSplitWarps ||
                      r.warps == decode::kWarpSplitWideWarps)
              << where;
          if (r.warps == decode::kWarpSplitWideWarps) {
            ++wide;
            EXPECT_EQ(r.warp_stages, decode::kStages) << where;
            EXPECT_EQ(r.stream_k_strips, 0) << where;
          }
        }
      }
    }
  }
  EXPECT_GT(wide, 0) << "no launch ran the wide instance";
}

// Asked off, or at two token tiles and more, or on the Stream-K grid, no plan is wide.
TEST(DecodeWideWarps, NeverBeyondOneTokenTileNorWhenTurnedOff) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 313);
  const testing::WeightFormat& f = testing::kWeightFormats[0];
  const QuantizedWeight w = testing::random_weight(
      rng, testing::format_spec(f, 1024, 28672, 128, false, DType::kBF16));
  for (int64_t m : {int64_t(1), int64_t(9), int64_t(16), int64_t(32)}) {
    for (int variant = 0; variant < 3; ++variant) {
      GemmCase c = testing::gemm_case(w, DType::kBF16, m, false, decode_options());
      c.options.decode_wide_warps = variant != 0;
      if (variant == 2) {
        if (!device_has_clusters()) continue;
        c.options.decode_stream_k = true;
      }
      const std::string where = "m=" + std::to_string(m) + " variant=" + std::to_string(variant);
      const auto r = testing::run_and_check(c, rng());
      ASSERT_TRUE(r.ok) << where << ": " << r.message;
      const bool may_be_wide = variant == 1 && m <= 8;
      if (!may_be_wide) EXPECT_EQ(r.warps, decode::kWarpSplitWarps) << where;
    }
  }
}

// The rule (config.h, wide_warps_pay) on the H200's 132 SMs: l3-70b.down (K = 28672, two clustered
// splits of 112 KB a four-warp warp) runs wide at M = 1 and 8; l3-70b.o (32 KB) and l3-8b.o
// (16 KB) keep four warps; the wide plans match the float64 reference.
TEST(DecodeWideWarps, TakenWhereWarpsStreamLong) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters() || testing::device_sm_count() != 132) {
    GTEST_SKIP() << "the measured plans are for the H200's 132 SMs (sm_90)";
  }
  if (decode::kWideWarpBytes == 0) GTEST_SKIP() << "the rule is off in this build";
  struct Case {
    int64_t n, k, m;
    bool wide;
  };
  const Case cases[] = {{8192, 28672, 1, true},
                        {8192, 28672, 8, true},
                        {8192, 8192, 1, false},
                        {4096, 4096, 1, false},
                        {8192, 28672, 16, false}};
  std::mt19937_64 rng(testing::test_seed() + 317);
  for (const Case& c : cases) {
    const std::string where = "n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                              " m=" + std::to_string(c.m);
    Problem problem;
    problem.m = c.m;
    ASSERT_TRUE(PackedGeometry::make(c.n, c.k, 4, 128, &problem.geometry).ok());
    Plan plan;
    ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok()) << where;
    EXPECT_EQ(plan.decode.warps,
              c.wide ? decode::kWarpSplitWideWarps : decode::kWarpSplitWarps)
        << where;
    if (!c.wide) continue;
    EXPECT_EQ(plan.decode.splits, 2) << where;
    EXPECT_EQ(plan.decode.epilogue, testing::kEpilogueCluster) << where;
    const QuantizedWeight w = testing::random_weight(
        rng, testing::format_spec(testing::kWeightFormats[0], c.n, c.k, 128, false,
                                  DType::kBF16));
    const auto result = testing::run_and_check(
        testing::gemm_case(w, DType::kBF16, c.m, c.m % 2 == 1, decode_options()), rng());
    ASSERT_TRUE(result.ok) << where << ": " << result.message;
    EXPECT_EQ(result.warps, decode::kWarpSplitWideWarps) << where;
  }
}

}  // namespace
}  // namespace sailfish
