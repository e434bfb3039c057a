// The decode tier's Stream-K grid (src/decode/stream_k_grid.h, stream_k_plan): clusters of CTAs
// whose warps walk flat runs over several strips and sum the tiles they share through distributed
// shared memory. Against the float64 reference on every int4 format, forced (strips, CTAs a
// cluster) grids whose runs start and end inside tiles, cover whole tiles, and leave a last cluster
// with fewer strips; bitwise stability; and the plan's own choice on an H200.
#include <gtest/gtest.h>

#include <string>

#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::GemmCase;

using testing::device_has_clusters;
using testing::device_sm_count;

Options stream_k_options(int strips, int cluster) {
  Options o;
  o.tier = Tier::kDecode;
  o.decode_stream_k = true;
  o.decode_stream_k_strips = strips;
  o.decode_splits = cluster;
  return o;
}

// Shapes (n, k) and forced grids (strips S, cluster C). A run is S k_blocks / 4C blocks long:
//   - 200 x 1000: 4 strips (n padded), 16 k-blocks with a K tail, so only S >= 3 at C = 2 keeps
//     six blocks a warp; S = 3 leaves the second cluster one strip;
//   - 448 x 2048: 7 strips of 32 k-blocks; S = 2 at C = 2 (runs of 8, four to a strip; the last
//     cluster one strip), S = 3 at C = 3 (runs of 8 over 96 units), S = 5 at C = 4 (runs of 10:
//     strip edges at 32 and 64 fall inside runs), S = 8 at C = 2 (one cluster of 7 strips, runs
//     of 28);
//   - 512 x 2048, S = 8 at C = 2: runs of exactly one strip, each tile stored by its run with no
//     reduction;
//   - 136 x 4096: 3 strips (n padded), 64 k-blocks, S = 3 at C = 8 (runs of 6).
TEST(DecodeStreamK, ForcedGridsMatchReference) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters()) GTEST_SKIP() << "Stream-K reduces through clusters (sm_90)";
  std::mt19937_64 rng(testing::test_seed() + 230);
  struct Grid {
    int64_t n, k;
    int strips, cluster;
  };
  const Grid grids[] = {{200, 1000, 3, 2}, {200, 1000, 4, 2}, {448, 2048, 2, 2},
                        {448, 2048, 3, 3}, {448, 2048, 5, 4}, {448, 2048, 8, 2},
                        {512, 2048, 8, 2}, {136, 4096, 3, 8}};
  for (int format_index = 0; format_index < testing::kWeightFormatCount; ++format_index) {
    const testing::WeightFormat& f = testing::kWeightFormats[format_index];
    if (f.bits != 4) continue;  // Stream-K instances are int4 only
    for (const Grid& grid : grids) {
      // Groups of 32 (several scale rows a block: the small-group loop), 128 and channelwise;
      // both activation types.
      for (const int group : {32, 128, -1}) {
        const DType dtype = (group == 128) == (format_index == 0) ? DType::kBF16 : DType::kF16;
        const QuantizedWeight w = testing::random_weight(
            rng, testing::format_spec(f, grid.n, grid.k, group, group == 32, dtype));
        for (const int64_t m : {int64_t(1), int64_t(7), int64_t(13), int64_t(16)}) {
          GemmCase c =
              testing::gemm_case(w, dtype, m, m != 7, stream_k_options(grid.strips, grid.cluster));
          const auto r = testing::run_and_check(c, rng());
          const std::string where = std::string(f.name) + " n=" + std::to_string(grid.n) +
                                    " k=" + std::to_string(grid.k) + " g=" +
                                    std::to_string(group) + " m=" + std::to_string(m) +
                                    " S=" + std::to_string(grid.strips) +
                                    " C=" + std::to_string(grid.cluster);
          EXPECT_TRUE(r.ok) << where << ": " << r.message;
          EXPECT_EQ(r.stream_k_strips, grid.strips) << where;
          EXPECT_EQ(r.splits, grid.cluster) << where;
        }
      }
    }
  }
}

// A grid that cannot keep six blocks a warp (S = 1 at C = 4 on 16 k-blocks), int8, and 17 tokens
// fall back to the split grid; the result is still right.
TEST(DecodeStreamK, InfeasibleGridsFallBackToSplits) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 231);
  struct Case {
    int format_index;
    int64_t m;
  };
  for (const Case& one : {Case{0, 1}, Case{3, 1}, Case{0, 17}}) {
    const testing::WeightFormat& f = testing::kWeightFormats[one.format_index];
    const QuantizedWeight w = testing::random_weight(
        rng, testing::format_spec(f, 200, 1000, 128, false, DType::kBF16));
    const GemmCase c = testing::gemm_case(w, DType::kBF16, one.m, true, stream_k_options(1, 4));
    const auto r = testing::run_and_check(c, rng());
    EXPECT_TRUE(r.ok) << f.name << " m=" << one.m << ": " << r.message;
    EXPECT_EQ(r.stream_k_strips, 0) << f.name << " m=" << one.m;
  }
}

// The Stream-K sums meet in a fixed order: bitwise identical run to run, deterministic mode or
// not.
TEST(DecodeStreamK, BitwiseStableRepeats) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters()) GTEST_SKIP() << "Stream-K reduces through clusters (sm_90)";
  std::mt19937_64 rng(testing::test_seed() + 232);
  const QuantizedWeight w = testing::random_weight(
      rng, testing::format_spec(testing::kWeightFormats[1], 448, 2048, 128, false, DType::kBF16));
  for (const bool deterministic : {false, true}) {
    GemmCase c = testing::gemm_case(w, DType::kBF16, 16, true, stream_k_options(3, 3));
    c.options.deterministic = deterministic;
    c.repeats = 5;
    const auto r = testing::run_and_check(c, rng());
    EXPECT_TRUE(r.ok) << r.message;
    EXPECT_EQ(r.stream_k_strips, 3);
    EXPECT_TRUE(r.bitwise_stable) << "Stream-K changed bits between runs";
  }
}

// Stream-K is opt-in (slower than the split grid on the H200, docs/perf/decode.md v18): the
// default plan never takes it. Forced, l3-8b.qkv (6144 x 4096) at M = 1 on a 132-SM Hopper gets
// three strips a cluster of eight CTAs (256 CTAs of 24 blocks, 48 on the busiest SMs, against a
// split grid's 64).
TEST(DecodeStreamK, OptInOnly) {
  SF_SKIP_WITHOUT_GPU();
  Options options;
  options.tier = Tier::kDecode;
  Problem problem;
  Plan plan;
  const int64_t shapes[][2] = {{6144, 4096}, {4096, 4096}, {8192, 8192}, {4096, 14336}};
  for (const int64_t m : {int64_t(1), int64_t(16)}) {
    problem.m = m;
    for (const auto& shape : shapes) {
      ASSERT_TRUE(PackedGeometry::make(shape[0], shape[1], 4, 128, &problem.geometry).ok());
      ASSERT_TRUE(sailfish::plan(problem, -1, options, &plan).ok());
      EXPECT_EQ(plan.decode.stream_k_strips, 0) << "n=" << shape[0] << " m=" << m;
    }
  }
  if (!device_has_clusters()) GTEST_SKIP() << "the rest plans the Stream-K grid: clusters (sm_90)";
  const int sms = device_sm_count();
  ASSERT_GT(sms, 0);
  // The expected grid is worked out for 132 SMs (H100/H200 SXM).
  if (sms != 132) GTEST_SKIP() << "the rest expects 132 SMs; this device has " << sms;
  options.decode_stream_k = true;
  problem.m = 1;
  ASSERT_TRUE(PackedGeometry::make(6144, 4096, 4, 128, &problem.geometry).ok());
  ASSERT_TRUE(sailfish::plan(problem, -1, options, &plan).ok());
  EXPECT_EQ(plan.decode.stream_k_strips, 3);
  EXPECT_EQ(plan.decode.splits, 8);
}

}  // namespace
}  // namespace sailfish
