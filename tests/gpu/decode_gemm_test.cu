// The decode tier (split-K mma.sync kernels) against the float64 reference: every format, group
// size, act-order, bias, both activation types, every token-tile regime and all three epilogues.
#include <gtest/gtest.h>

#include <iterator>
#include <tuple>
#include <vector>

#include "decode/config.h"
#include "decode_test_helpers.h"
#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::GemmCase;
using testing::RandomWeightSpec;

using testing::decode_options;
using testing::device_has_clusters;
using testing::device_sm_count;
using testing::kEpilogueCluster;
using testing::kEpiloguePartials;

class DecodeFormats : public ::testing::TestWithParam<std::tuple<int, int, bool, DType>> {};

TEST_P(DecodeFormats, MatchesReference) {
  SF_SKIP_WITHOUT_GPU();
  const auto [format_index, group_size, act_order, dtype] = GetParam();
  const testing::WeightFormat& f = testing::kWeightFormats[format_index];
  std::mt19937_64 rng(testing::test_seed() + 201);
  // Odd shape (padding in n and k, k % 8 != 0 forces the activation copy) and an aligned one,
  // long enough in k for several splits.
  const int64_t shapes[][2] = {{200, 1000}, {128, 2048}};
  for (const auto& shape : shapes) {
    // M = 1 and 13: scaled sums (1 and 2 token tiles); 24: per-pair scaling (3 tiles); 40: the
    // strip kernel.
    for (int64_t m : {int64_t(1), int64_t(13), int64_t(24), int64_t(40)}) {
      const RandomWeightSpec spec =
          testing::format_spec(f, shape[0], shape[1], group_size, act_order, dtype);
      const GemmCase c = testing::gemm_case(testing::random_weight(rng, spec), dtype, m, m != 13,
                                            decode_options(m == 40));
      const auto r = testing::run_and_check(c, rng());
      EXPECT_TRUE(r.ok) << f.name << ": " << r.message;
      EXPECT_EQ(r.tier, Tier::kDecode);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllFormats, DecodeFormats,
    ::testing::Combine(::testing::Range(0, testing::kWeightFormatCount),
                       ::testing::Values(16, 32, 64, 128, 256, -1),
                       ::testing::Bool(), ::testing::Values(DType::kF16, DType::kBF16)));

// Every M of the issue's list (every token-tile count, several M groups past 64), both split
// epilogues (ordered fp32 partials, the default; red.global, opt-in, with its rounding allowance),
// both widths and types.
class DecodeMSweep : public ::testing::TestWithParam<std::tuple<int, DType, bool>> {};

TEST_P(DecodeMSweep, EveryM) {
  SF_SKIP_WITHOUT_GPU();
  const auto [bits, dtype, atomic] = GetParam();
  std::mt19937_64 rng(testing::test_seed() + 202);
  RandomWeightSpec spec;
  spec.n = 136;
  spec.k = 2560;
  spec.bits = bits;
  spec.group_size = 128;
  spec.zero_kind = ZeroPointKind::kInteger;
  spec.scale_dtype = dtype;
  const QuantizedWeight w = testing::random_weight(rng, spec);
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= 17; ++m) ms.push_back(m);
  for (int64_t m : {24, 31, 32, 33, 48, 49, 64, 127, 128, 129}) ms.push_back(m);
  for (int64_t m : ms) {
    GemmCase c;
    c.weight = w;
    c.dtype = dtype;
    c.m = m;
    c.bias = true;
    c.options = decode_options(false, atomic);
    c.allow_split_rounding = atomic;
    const auto r = testing::run_and_check(c, rng());
    EXPECT_TRUE(r.ok) << r.message;
  }
}

INSTANTIATE_TEST_SUITE_P(BitsTypesModes, DecodeMSweep,
                         ::testing::Combine(::testing::Values(4, 8),
                                            ::testing::Values(DType::kF16, DType::kBF16),
                                            ::testing::Bool()));

// The default split epilogue is deterministic too: bitwise identical run to run, in graph replays,
// and in runs enqueued back to back on one workspace (overlapping under programmatic dependent
// launch).
TEST(DecodeDeterminism, DefaultEpilogueIsBitwiseStable) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 206);
  RandomWeightSpec spec;
  spec.n = 256;
  spec.k = 8192;
  GemmCase c;
  c.weight = testing::random_weight(rng, spec);
  c.m = 3;
  c.options = decode_options();
  c.repeats = 5;
  c.graph_replays = 2;
  c.back_to_back = 3;
  const auto r = testing::run_and_check(c, rng());
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_GT(r.splits, 1);
  EXPECT_EQ(r.decode_epilogue, device_has_clusters() ? kEpilogueCluster : kEpiloguePartials);
  EXPECT_TRUE(r.bitwise_stable) << "the ordered split epilogue changed bits between runs";
}

// The cluster epilogue (the default split reduction on sm_90) adds the same partial sums in the
// same order as the reduce kernel: bitwise the same output, with no partials workspace. Every
// format, forced depths 2-8 and the heuristic's, M in three token-tile regimes, odd and aligned
// shapes; a depth past the cluster limit falls back to the reduce kernel.
TEST(DecodeClusterEpilogue, BitwiseEqualToTheReduceKernel) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters()) GTEST_SKIP() << "thread-block clusters need sm_90";
  std::mt19937_64 rng(testing::test_seed() + 207);
  const int64_t shapes[][2] = {{200, 1000}, {136, 2048}};
  for (int format_index = 0; format_index < testing::kWeightFormatCount; ++format_index) {
    const testing::WeightFormat& f = testing::kWeightFormats[format_index];
    for (const auto& shape : shapes) {
      const DType dtype = testing::format_test_dtype(format_index);
      const QuantizedWeight w = testing::random_weight(
          rng, testing::format_spec(f, shape[0], shape[1], 64, false, dtype));
      for (int64_t m : {int64_t(1), int64_t(13), int64_t(32)}) {
        for (int splits : {0, 2, 3, 5, 8, 9}) {  // 0: the heuristic
          GemmCase cluster = testing::gemm_case(w, dtype, m, true, decode_options());
          if (splits > 0) cluster.options.decode_splits = splits;
          GemmCase reduce = cluster;
          reduce.options.decode_cluster_reduce = false;
          const uint64_t seed = rng();
          const auto a = testing::run_and_check(cluster, seed);
          const auto b = testing::run_and_check(reduce, seed);
          const std::string where = std::string(f.name) + " n=" + std::to_string(shape[0]) +
                                    " k=" + std::to_string(shape[1]) + " m=" +
                                    std::to_string(m) + " splits=" + std::to_string(a.splits);
          ASSERT_TRUE(a.ok) << where << ": " << a.message;
          ASSERT_TRUE(b.ok) << where << ": " << b.message;
          if (a.splits < 2) continue;  // one split stores directly: no reduction to compare
          EXPECT_EQ(a.decode_epilogue, a.splits <= 8 ? kEpilogueCluster : kEpiloguePartials)
              << where;
          EXPECT_EQ(b.decode_epilogue, kEpiloguePartials) << where;
          EXPECT_EQ(a.output_bits, b.output_bits) << where;
          if (a.decode_epilogue == kEpilogueCluster) {
            EXPECT_LT(a.workspace_bytes, b.workspace_bytes) << where << ": partials allocated";
          }
        }
      }
    }
  }
}

// The cluster epilogue's push form (each rank sends its sums of a fragment to the fragment's owner
// rank, which adds and stores) against the barrier form and the reduce kernel: bitwise the same
// output, each checked against the float64 reference. Every format; 2, 3, 5, 7 and 8 ranks forced
// (at 5-8 ranks and one token tile some ranks own no fragment and only send; at 3 ranks and two
// tiles the owners hold 3, 3 and 2); 1 and 2 token tiles (the push form's), odd and aligned shapes,
// bias on and off; beyond 2 token tiles the form is never taken.
TEST(DecodeClusterEpilogue, PushFormBitwiseEqualToBarrierForm) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters()) GTEST_SKIP() << "thread-block clusters need sm_90";
  std::mt19937_64 rng(testing::test_seed() + 214);
  const int64_t shapes[][2] = {{200, 1000}, {136, 2048}, {4096, 1024}};
  int pushed = 0;
  for (int format_index = 0; format_index < testing::kWeightFormatCount; ++format_index) {
    const testing::WeightFormat& f = testing::kWeightFormats[format_index];
    for (const auto& shape : shapes) {
      const DType dtype = testing::format_test_dtype(format_index);
      const QuantizedWeight w = testing::random_weight(
          rng, testing::format_spec(f, shape[0], shape[1], 128, false, dtype));
      for (int64_t m : {int64_t(1), int64_t(7), int64_t(16), int64_t(17)}) {
        // Every depth's three forms on the same inputs: one host reference for the fifteen runs.
        const int split_counts[] = {2, 3, 5, 7, 8};
        const GemmCase base = testing::gemm_case(w, dtype, m, m % 2 == 1, decode_options());
        std::vector<Options> variants;
        for (int splits : split_counts) {
          Options push = base.options;
          push.decode_splits = splits;
          push.decode_cluster_push = true;
          Options barrier = push;
          barrier.decode_cluster_push = false;
          Options reduce = barrier;
          reduce.decode_cluster_reduce = false;
          variants.insert(variants.end(), {push, barrier, reduce});
        }
        const auto results = testing::run_and_check_variants(base, variants, rng());
        for (size_t i = 0; i < std::size(split_counts); ++i) {
          const auto& a = results[3 * i];
          const auto& b = results[3 * i + 1];
          const auto& c = results[3 * i + 2];
          const std::string where = std::string(f.name) + " n=" + std::to_string(shape[0]) +
                                    " k=" + std::to_string(shape[1]) + " m=" +
                                    std::to_string(m) + " splits=" + std::to_string(a.splits);
          ASSERT_TRUE(a.ok) << where << ": " << a.message;
          ASSERT_TRUE(b.ok) << where << ": " << b.message;
          ASSERT_TRUE(c.ok) << where << ": " << c.message;
          EXPECT_FALSE(b.cluster_push) << where;
          if (a.splits < 2 || a.decode_epilogue != kEpilogueCluster) continue;
          EXPECT_EQ(a.cluster_push, m <= 16) << where << ": push form beyond 2 token tiles";
          pushed += a.cluster_push ? 1 : 0;
          EXPECT_EQ(a.output_bits, b.output_bits) << where;
          EXPECT_EQ(a.output_bits, c.output_bits) << where;
        }
      }
    }
  }
  EXPECT_GT(pushed, 0) << "no case ran the push form";
}

// The plan's own choice: the push form at 1-2 token tiles wherever its receive area keeps the
// grid's clusters resident: l3-8b.o at M = 1 (2 ranks) and l3-70b.qkv at M = 1 (3 ranks); never at
// M = 32 (3-4 token tiles) and never when switched off.
TEST(DecodeClusterEpilogue, PlanPushesAtOneAndTwoTokenTiles) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters()) GTEST_SKIP() << "thread-block clusters need sm_90";
  Problem problem;
  const int64_t shapes[][2] = {{4096, 4096}, {10240, 8192}};  // l3-8b.o, l3-70b.qkv
  for (int64_t m : {int64_t(1), int64_t(16), int64_t(32)}) {
    for (const auto& nk : shapes) {
      problem.m = m;
      ASSERT_TRUE(PackedGeometry::make(nk[0], nk[1], 4, 128, &problem.geometry).ok());
      Plan plan;
      ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
      const DecodePlan& d = plan.decode;
      const std::string where = "n=" + std::to_string(nk[0]) + " m=" + std::to_string(m) +
                                " splits=" + std::to_string(d.splits);
      if (d.cluster_push) {
        EXPECT_EQ(d.epilogue, kEpilogueCluster) << where;
        EXPECT_GE(d.splits, 2) << where;
        EXPECT_LE(d.token_tiles, 2) << where;
      }
      if (m == 1 && d.epilogue == kEpilogueCluster) {
        EXPECT_TRUE(d.cluster_push) << where << ": left on the barrier form";
      }
      if (m > 16) EXPECT_FALSE(d.cluster_push) << where;
      Options off = decode_options();
      off.decode_cluster_push = false;
      ASSERT_TRUE(sailfish::plan(problem, -1, off, &plan).ok());
      EXPECT_FALSE(plan.decode.cluster_push) << where;
    }
  }
}

// The reduce kernel sums four columns a thread (16-byte loads of token-major partials) and
// stores four outputs at once where the row allows: an odd N gives a short last chunk and rows
// that start off an 8-byte boundary, N = 2 a single short chunk, and M past 65535 tokens walks
// the grid's y dimension more than once. Bias on, so it is added once per output.
TEST(DecodeReduceKernel, OddWidthsAndManyTokens) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 213);
  struct Case {
    int64_t n, k, m;
  };
  const Case cases[] = {{197, 1000, 1}, {197, 1000, 13}, {197, 1000, 29}, {2, 512, 7},
                        {64, 256, 65535 + 70}};
  for (const Case& shape : cases) {
    const QuantizedWeight w = testing::random_weight(
        rng, testing::format_spec(testing::kWeightFormats[0], shape.n, shape.k, 128, false,
                                  DType::kBF16));
    GemmCase c = testing::gemm_case(w, DType::kBF16, shape.m, true, decode_options());
    c.options.decode_splits = 2;
    c.options.decode_cluster_reduce = false;
    const auto r = testing::run_and_check(c, rng());
    const std::string where = "n=" + std::to_string(shape.n) + " k=" + std::to_string(shape.k) +
                              " m=" + std::to_string(shape.m);
    ASSERT_TRUE(r.ok) << where << ": " << r.message;
    EXPECT_EQ(r.splits, 2) << where;
    EXPECT_EQ(r.decode_epilogue, kEpiloguePartials) << where;
  }
}

// One token tile, where the heuristic's clusters are not all resident: two clustered splits
// rather than the reduce kernel when their grid covers every SM (l3-70b.o and l3-70b.down, 128
// strips on an H200), the reduce kernel when it does not (16 strips). Deterministic mode takes the
// same path.
TEST(DecodeSplitPlan, OneTokenTilePrefersClusteredPairs) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters()) GTEST_SKIP() << "thread-block clusters need sm_90";
  const int sms = device_sm_count();
  ASSERT_GT(sms, 0);
  Problem problem;
  problem.m = 1;
  Plan plan;
  for (const int64_t k : {int64_t(8192), int64_t(28672)}) {
    ASSERT_TRUE(PackedGeometry::make(8192, k, 4, 128, &problem.geometry).ok());
    for (const bool deterministic : {false, true}) {
      ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(deterministic), &plan).ok());
      const std::string where = "k=" + std::to_string(k);
      EXPECT_EQ(plan.decode.epilogue, kEpilogueCluster) << where;
      if (plan.decode.splits == 2) EXPECT_GE(2 * problem.geometry.n_blocks, sms) << where;
    }
  }
  // 16 strips x 2 = 32 CTAs: pairs would leave SMs idle, so a deep split keeps its reduce kernel
  // or clusters of its own depth, never a pair chosen by the fallback.
  ASSERT_TRUE(PackedGeometry::make(1024, 65536, 4, 128, &problem.geometry).ok());
  ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
  EXPECT_GT(plan.decode.splits, 2);
}

// The pair fallback at one token tile takes four clustered splits where its pairs sit unevenly
// (config.h, quad_fallback_pays; v51): on the H200's 132 SMs q32.down (80 strips x 432 k-blocks)
// and g27.down (84 x 336) at M = 1-8, padded to three CTAs an SM, also with N and K off the 64
// grid (masked strips, the activation copy), in deterministic mode too; l3-70b.down (128 strips)
// keeps its pairs. The quad plans match the float64 reference with bias at M = 1, 3 and 8, int4
// and int8, and run bitwise stable.
TEST(DecodeSplitPlan, FewStripsOverLongKTakeClusteredQuads) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters() || device_sm_count() != 132) {
    GTEST_SKIP() << "the measured plans are for the H200's 132 SMs (sm_90)";
  }
  if (!decode::kQuadFallback) GTEST_SKIP() << "the rule is off in this build";
  struct Case {
    int64_t n, k, m;
    int splits;
  };
  const Case cases[] = {{5120, 27648, 1, 4}, {5120, 27648, 8, 4}, {5376, 21504, 3, 4},
                        {5100, 27600, 1, 4}, {8192, 28672, 1, 2}};
  for (const Case& c : cases) {
    for (const bool deterministic : {false, true}) {
      const std::string where = "n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                                " m=" + std::to_string(c.m) +
                                (deterministic ? " deterministic" : "");
      Problem problem;
      problem.m = c.m;
      ASSERT_TRUE(PackedGeometry::make(c.n, c.k, 4, 128, &problem.geometry).ok()) << where;
      Plan plan;
      ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(deterministic), &plan).ok())
          << where;
      EXPECT_EQ(plan.decode.splits, c.splits) << where;
      EXPECT_EQ(plan.decode.epilogue, kEpilogueCluster) << where;
      // The quads are padded to their grid's share (320 or 336 CTAs: three an SM) wherever an SM
      // would hold more: at M = 1 four fit.
      if (c.splits == 4 && c.m == 1) EXPECT_EQ(plan.decode.spread_ctas, 3) << where;
    }
  }
  std::mt19937_64 rng(testing::test_seed() + 219);
  struct Run {
    int format_index;
    int64_t n, k, m;
  };
  const Run runs[] = {{0, 5120, 27648, 1}, {0, 5100, 27600, 3}, {0, 5376, 21504, 8},
                      {3, 5120, 27648, 1}};
  for (const Run& run : runs) {
    const testing::WeightFormat& f = testing::kWeightFormats[run.format_index];
    const std::string where = std::string(f.name) + " n=" + std::to_string(run.n) +
                              " k=" + std::to_string(run.k) + " m=" + std::to_string(run.m);
    const QuantizedWeight w = testing::random_weight(
        rng, testing::format_spec(f, run.n, run.k, 128, false, DType::kBF16));
    GemmCase c = testing::gemm_case(w, DType::kBF16, run.m, true, decode_options());
    c.repeats = 2;
    const auto r = testing::run_and_check(c, rng());
    ASSERT_TRUE(r.ok) << where << ": " << r.message;
    EXPECT_EQ(r.decode_epilogue, kEpilogueCluster) << where;
    if (f.bits == 4) EXPECT_EQ(r.splits, 4) << where;
  }
}

// One split whose one wave spreads unevenly (config.h, one_wave_split_pays): l3-8b.gate_up at
// M = 1, 448 strips on the H200's 132 SMs (4 CTAs on some, 3 on the rest), takes 2 clustered
// splits, and the pair runs against the reference like any other launch.
TEST(DecodeSplitPlan, UnevenOneWaveGridTakesClusteredPairs) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters()) GTEST_SKIP() << "thread-block clusters need sm_90";
  const int sms = device_sm_count();
  ASSERT_GT(sms, 0);
  Problem problem;
  problem.m = 1;
  ASSERT_TRUE(PackedGeometry::make(28672, 4096, 4, 128, &problem.geometry).ok());
  Plan plan;
  ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
  if (sms == 132) {
    EXPECT_EQ(plan.decode.splits, 2);
    EXPECT_EQ(plan.decode.epilogue, kEpilogueCluster);
  }
  std::mt19937_64 rng(testing::test_seed() + 215);
  const QuantizedWeight w = testing::random_weight(
      rng, testing::format_spec(testing::kWeightFormats[0], 28672, 4096, 128, false,
                                DType::kBF16));
  const GemmCase c = testing::gemm_case(w, DType::kBF16, 1, true, decode_options());
  const auto r = testing::run_and_check(c, rng());
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.splits, plan.decode.splits);
  // Not at 3-4 token tiles, where a pair at four stages would keep the plan from three
  // (launch.cu): l3-70b.qkv at M = 32 (160 strips) runs 2 clustered splits at three stages.
  problem.m = 32;
  ASSERT_TRUE(PackedGeometry::make(10240, 8192, 4, 128, &problem.geometry).ok());
  ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
  if (sms != 132) GTEST_SKIP() << "the stage count expects 132 SMs; this device has " << sms;
  EXPECT_EQ(plan.decode.warp_stages, 3);
}

// A grid of more tiles than resident CTAs keeps one split (config.h: the multi-wave pair of v12a
// lost on every grid it paired, v32b): l3-8b.gate_up (448 strips) at M = 16, 24 and 32 and
// Qwen2.5-7B's gate_up (592 strips) at M = 1, 16 and 32 on an H200; the M = 24 plan runs against
// the reference.
TEST(DecodeSplitPlan, MultiWaveGridKeepsOneSplit) {
  SF_SKIP_WITHOUT_GPU();
  const int sms = device_sm_count();
  ASSERT_GT(sms, 0);
  Problem problem;
  Plan plan;
  const int64_t cases[][3] = {{28672, 4096, 16}, {28672, 4096, 24}, {28672, 4096, 32},
                              {37888, 3584, 1},  {37888, 3584, 16}, {37888, 3584, 32}};
  for (const auto& c : cases) {  // {n, k, m}
    problem.m = c[2];
    ASSERT_TRUE(PackedGeometry::make(c[0], c[1], 4, 128, &problem.geometry).ok());
    ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
    if (sms == 132) {
      EXPECT_EQ(plan.decode.splits, 1) << "n=" << c[0] << " m=" << c[2];
      EXPECT_EQ(plan.decode.epilogue, 0) << "n=" << c[0] << " m=" << c[2];
    }
  }
  std::mt19937_64 rng(testing::test_seed() + 218);
  const QuantizedWeight w = testing::random_weight(
      rng, testing::format_spec(testing::kWeightFormats[0], 28672, 4096, 128, false,
                                DType::kBF16));
  const GemmCase c = testing::gemm_case(w, DType::kBF16, 24, true, decode_options());
  const auto r = testing::run_and_check(c, rng());
  EXPECT_TRUE(r.ok) << r.message;
  if (sms != 132) GTEST_SKIP() << "the split depth expects 132 SMs; this device has " << sms;
  EXPECT_EQ(r.splits, 1);
}

// A one-split grid of less than a wave, uneven over the SMs, with room for another CTA on its
// busiest SM (config.h, partial_wave_split_pays): Mixtral's 4096 x 14336 expert at M = 16, 224
// strips at 3 CTAs an SM on an H200, takes two clustered splits and runs against the reference.
// An even grid (264 strips at M = 16) and a full one (520 strips at M = 1, 4 a SM) keep one.
TEST(DecodeSplitPlan, PartialUnevenWaveTakesClusteredPairs) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters()) GTEST_SKIP() << "thread-block clusters need sm_90";
  const int sms = device_sm_count();
  ASSERT_GT(sms, 0);
  std::mt19937_64 rng(testing::test_seed() + 217);
  const QuantizedWeight w = testing::random_weight(
      rng, testing::format_spec(testing::kWeightFormats[0], 14336, 4096, 128, false,
                                DType::kBF16));
  const GemmCase c = testing::gemm_case(w, DType::kBF16, 16, true, decode_options());
  const auto r = testing::run_and_check(c, rng());
  ASSERT_TRUE(r.ok) << r.message;
  if (sms != 132) GTEST_SKIP() << "the plans below expect 132 SMs; this device has " << sms;
  EXPECT_EQ(r.splits, 2);
  EXPECT_EQ(r.decode_epilogue, kEpilogueCluster);
  Problem problem;
  Plan plan;
  const int64_t keep_one[][2] = {{264 * 64, 16}, {520 * 64, 1}};  // {n, m}
  for (const auto& nm : keep_one) {
    problem.m = nm[1];
    ASSERT_TRUE(PackedGeometry::make(nm[0], 4096, 4, 128, &problem.geometry).ok());
    ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
    EXPECT_EQ(plan.decode.splits, 1) << "n=" << nm[0] << " m=" << nm[1];
  }
}

// int8 at one token tile (config.h, int8_tail_split_pays): 264 strips of 64 k-blocks, one split
// at 3 CTAs an SM on an H200, where the wave rules come out level. At M = 1-3 the SM still holds
// 3 CTAs with the pair's push area, so the plan takes two clustered splits by push; at M = 4 the
// area would cost the third CTA and at M = 8 only 2 fit, so one split stays. Each plan runs
// against the reference, deterministic mode included (its cluster sums are ordered).
TEST(DecodeSplitPlan, Int8OneTokenTileTakesPushedPairsWhereThreeCtasFit) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters()) GTEST_SKIP() << "thread-block clusters need sm_90";
  const int sms = device_sm_count();
  ASSERT_GT(sms, 0);
  const int64_t n = 264 * 64, k = 4096;
  std::mt19937_64 rng(testing::test_seed() + 216);
  const QuantizedWeight w = testing::random_weight(
      rng, testing::format_spec(testing::kWeightFormats[3], n, k, 128, false, DType::kBF16));
  for (const int64_t m : {int64_t(1), int64_t(3), int64_t(4), int64_t(8)}) {
    for (const bool deterministic : {false, true}) {
      const std::string where = "m=" + std::to_string(m) +
                                (deterministic ? " deterministic" : "");
      GemmCase c = testing::gemm_case(w, DType::kBF16, m, m == 3, decode_options(deterministic));
      c.repeats = deterministic ? 3 : 1;
      const auto r = testing::run_and_check(c, rng());
      ASSERT_TRUE(r.ok) << where << ": " << r.message;
      EXPECT_TRUE(r.bitwise_stable) << where;
      if (sms != 132) continue;
      if (m <= 3) {
        EXPECT_EQ(r.splits, 2) << where;
        EXPECT_EQ(r.decode_epilogue, kEpilogueCluster) << where;
        EXPECT_TRUE(r.cluster_push) << where;
      } else {
        EXPECT_EQ(r.splits, 1) << where;
      }
    }
  }
}

// Deterministic mode: bitwise identical run to run, on a shape with many splits.
TEST(DecodeDeterminism, BitwiseIdenticalRepeats) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 203);
  RandomWeightSpec spec;
  spec.n = 256;
  spec.k = 8192;
  GemmCase c;
  c.weight = testing::random_weight(rng, spec);
  c.m = 16;
  c.bias = true;
  c.options = decode_options(true);
  c.repeats = 5;
  const auto r = testing::run_and_check(c, rng());
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_TRUE(r.bitwise_stable) << "deterministic mode changed bits between runs";
}

// Router GEMVs and sharded layers (testing::kOddShapes) at one token.
TEST(DecodeOddShapes, RoutersAndShards) {
  SF_SKIP_WITHOUT_GPU();
  testing::check_odd_shapes(testing::test_seed() + 204, 1, decode_options());
}

// K a multiple of 8 but not of 64. At 1-3 token tiles the warp-split kernel zero-fills the K tail
// of the activations itself; at 4 (M = 25-32) its loop reads whole 64-column blocks with no tail
// test, so the plan copies the activations into a workspace zero-padded to k_pad, and the columns
// past K must come out of that copy as zeros (v38). K a multiple of 64 is read in place. Every
// token-tile count of the kernel, both widths, symmetric and with zero points.
TEST(DecodeOddShapes, KTailThroughTheZeroPaddedCopy) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 219);
  for (int bits : {4, 8}) {
    for (ZeroPointKind zero : {ZeroPointKind::kNone, ZeroPointKind::kInteger}) {
      for (int64_t k : {int64_t(1096), int64_t(4128), int64_t(4096)}) {
        RandomWeightSpec spec;
        spec.n = 200;
        spec.k = k;
        spec.bits = bits;
        spec.group_size = 128;
        spec.zero_kind = zero;
        const QuantizedWeight w = testing::random_weight(rng, spec);
        for (int64_t m : {1, 13, 24, 32}) {
          GemmCase c;
          c.weight = w;
          c.m = m;
          c.bias = true;
          c.options.tier = Tier::kDecode;
          const auto r = testing::run_and_check(c, rng());
          const std::string where = "bits=" + std::to_string(bits) + " k=" + std::to_string(k) +
                                    " m=" + std::to_string(m);
          EXPECT_TRUE(r.ok) << where << ": " << r.message;
          EXPECT_TRUE(r.warp_split) << where;
          EXPECT_EQ(r.copied_activations, k % 64 != 0 && m > 24) << where;
        }
      }
    }
  }
}

// The auto tier sends small M to decode and large M to prefill (dense where prefill cannot run).
TEST(DecodeDispatch, AutoPicksDecodeForSmallM) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 205);
  RandomWeightSpec spec;
  spec.n = 128;
  spec.k = 512;
  GemmCase c;
  c.weight = testing::random_weight(rng, spec);
  EXPECT_EQ(testing::checked_tier(c, 4, rng()), Tier::kDecode);
  EXPECT_NE(testing::checked_tier(c, 1024, rng()), Tier::kDecode);
}

// Programmatic dependent launch on (the default) and off give the same, correct result, also when
// runs follow each other on one stream with no synchronization between them (back_to_back: the
// next run's prep and main kernels start under this run's, and the prep rewrites the workspace's
// activation copy the main kernel before it reads) and in graph replays.
TEST(DecodeLaunch, WithAndWithoutProgrammaticDependentLaunch) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 207);
  RandomWeightSpec spec;
  spec.n = 192;
  spec.k = 4096;
  spec.act_order = true;  // prep kernel -> main kernel -> reduce kernel, all chained
  for (bool pdl : {true, false}) {
    GemmCase c;
    c.weight = testing::random_weight(rng, spec);
    c.m = 5;
    c.bias = true;
    c.options.tier = Tier::kDecode;
    c.options.programmatic_dependent_launch = pdl;
    c.repeats = 3;
    c.back_to_back = 4;
    c.graph_replays = 2;
    const auto r = testing::run_and_check(c, rng());
    EXPECT_TRUE(r.ok) << "pdl=" << pdl << ": " << r.message;
    EXPECT_TRUE(r.bitwise_stable);
  }
}

// Both decode kernels for M <= 32 (warps split K, the default; warps split the strip's n16
// groups) on every width, zero-point kind, and token-tile count they share.
TEST(DecodeKernels, WarpSplitAndStripBothMatchReference) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 208);
  for (int bits : {4, 8}) {
    for (ZeroPointKind zero : {ZeroPointKind::kNone, ZeroPointKind::kInteger}) {
      RandomWeightSpec spec;
      spec.n = 136;
      spec.k = 3008;  // 47 k-blocks: uneven splits and uneven warp ranges
      spec.bits = bits;
      spec.group_size = 64;
      spec.zero_kind = zero;
      const QuantizedWeight w = testing::random_weight(rng, spec);
      for (int64_t m : {1, 9, 17, 25, 32}) {
        for (bool warp_split : {true, false}) {
          GemmCase c;
          c.weight = w;
          c.m = m;
          c.bias = true;
          c.options.tier = Tier::kDecode;
          c.options.decode_warp_split = warp_split;
          const auto r = testing::run_and_check(c, rng());
          EXPECT_TRUE(r.ok) << "warp_split=" << warp_split << ": " << r.message;
        }
      }
    }
  }
}

// The decode kernels read zero folds whenever the weight's pointer is set, and the warp-split plan
// sizes its stages by the zero-point kind: a symmetric weight view with a zero_fold pointer is an
// error at run(), not an out-of-bounds shared-memory write.
TEST(DecodeRun, ZeroFoldOnASymmetricWeightIsRefused) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 209);
  RandomWeightSpec spec;
  spec.n = 64;
  spec.k = 256;
  PackedWeight packed;
  ASSERT_TRUE(pack(testing::random_weight(rng, spec), DType::kBF16, &packed).ok());
  DeviceWeightStorage storage;
  ASSERT_TRUE(DeviceWeightStorage::upload(packed, &storage).ok());
  Plan plan;
  ASSERT_TRUE(
      sailfish::plan(Problem::for_weight(storage.view(), 1, DType::kBF16, false), -1,
                     decode_options(), &plan)
          .ok());
  std::unique_ptr<Context> context;
  ASSERT_TRUE(Context::create(-1, &context).ok());
  testing::DeviceBuffer a, y(64 * 2), ws;
  ASSERT_TRUE(a.upload(std::vector<uint16_t>(256, 0)));
  ASSERT_TRUE(ws.allocate(workspace_size(plan)));
  DeviceWeight view = storage.view();
  view.zero_fold = view.scales;  // any device pointer: it must not be read
  RunArgs args;
  args.a = a.get();
  args.y = y.get();
  args.weight = &view;
  const Status s = run(plan, args, ws.get(), ws.bytes(), *context, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_NE(s.message().find("zero_fold"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sailfish
