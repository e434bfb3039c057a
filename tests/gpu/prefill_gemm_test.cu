// The prefill tier (warp-specialized wgmma + TMA, sm_90a) against the float64 reference: every
// format, group size, act-order, bias, both activation types, every token width, split-K and the
// persistent multi-unit walk, odd shapes. Skips without a GPU; on a GPU that cannot run the tier
// (not sm_90, or a build without sm_90a), plan() must refuse it with kUnsupported, checked here.
#include <gtest/gtest.h>

#include <tuple>
#include <utility>

#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "prefill_test_helpers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::GemmCase;
using testing::RandomWeightSpec;
using testing::prefill_options;

class PrefillFormats
    : public ::testing::TestWithParam<std::tuple<int, int, bool, DType>> {};

TEST_P(PrefillFormats, MatchesReference) {
  SF_SKIP_WITHOUT_PREFILL();
  const auto [format_index, group_size, act_order, dtype] = GetParam();
  const testing::WeightFormat& f = testing::kWeightFormats[format_index];
  std::mt19937_64 rng(testing::test_seed() + 301);
  // Odd shape (n and k padded, k % 8 != 0 forces the activation copy, an odd strip count leaves
  // the second consumer of the last tile idle) and an aligned one with several splits.
  const int64_t shapes[][2] = {{200, 1000}, {384, 2048}};
  for (const auto& shape : shapes) {
    for (int64_t m : {int64_t(77), int64_t(300)}) {
      const RandomWeightSpec spec =
          testing::format_spec(f, shape[0], shape[1], group_size, act_order, dtype);
      const GemmCase c = testing::gemm_case(testing::random_weight(rng, spec), dtype, m,
                                            m != 77 || shape[0] == 384, prefill_options());
      const auto r = testing::run_and_check(c, rng());
      EXPECT_TRUE(r.ok) << f.name << ": " << r.message;
      EXPECT_EQ(r.tier, Tier::kPrefill);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllFormats, PrefillFormats,
    ::testing::Combine(::testing::Range(0, testing::kWeightFormatCount),
                       ::testing::Values(16, 32, 64, 128, 256, -1), ::testing::Bool(),
                       ::testing::Values(DType::kF16, DType::kBF16)));

// M around the token widths and their multiples (the cost model picks the width), with and without
// splits.
class PrefillMSweep : public ::testing::TestWithParam<std::tuple<int, DType>> {};

TEST_P(PrefillMSweep, EveryM) {
  SF_SKIP_WITHOUT_PREFILL();
  const auto [bits, dtype] = GetParam();
  std::mt19937_64 rng(testing::test_seed() + 302);
  RandomWeightSpec spec;
  spec.n = 264;  // 5 strips: 3 tiles, the last half empty
  spec.k = 2560;
  spec.bits = bits;
  spec.group_size = 128;
  spec.zero_kind = ZeroPointKind::kInteger;
  spec.scale_dtype = dtype;
  const QuantizedWeight w = testing::random_weight(rng, spec);
  for (int64_t m : {1, 17, 64, 65, 127, 128, 129, 255, 256, 257, 511, 700}) {
    const GemmCase c = testing::gemm_case(w, dtype, m, true, prefill_options());
    const auto r = testing::run_and_check(c, rng());
    EXPECT_TRUE(r.ok) << r.message;
  }
}

INSTANTIATE_TEST_SUITE_P(BitsTypes, PrefillMSweep,
                         ::testing::Combine(::testing::Values(4, 8),
                                            ::testing::Values(DType::kF16, DType::kBF16)));

// Every token width, forced, at M around the width and across several token tiles, one split and
// several: the narrow widths serve small M, and the masked rows of a partial tile must not leak.
class PrefillTokenWidths : public ::testing::TestWithParam<std::tuple<int, int, DType>> {};

TEST_P(PrefillTokenWidths, MatchesReference) {
  SF_SKIP_WITHOUT_PREFILL();
  const auto [tokens, bits, dtype] = GetParam();
  std::mt19937_64 rng(testing::test_seed() + 309);
  RandomWeightSpec spec;
  spec.n = 392;  // 7 strips: the last tile's second consumer idle
  spec.k = 1536;
  spec.bits = bits;
  spec.group_size = 64;
  spec.zero_kind = bits == 4 ? ZeroPointKind::kInteger : ZeroPointKind::kNone;
  spec.scale_dtype = dtype;
  const QuantizedWeight w = testing::random_weight(rng, spec);
  for (int64_t m : {int64_t(1), int64_t(tokens - 1), int64_t(tokens), int64_t(2 * tokens + 3)}) {
    if (m < 1) continue;
    for (int64_t splits : {1, 3}) {
      Options o = prefill_options();
      o.prefill_tokens = tokens;
      o.prefill_splits = splits;
      const auto r = testing::run_and_check(testing::gemm_case(w, dtype, m, true, o), rng());
      EXPECT_TRUE(r.ok) << "tokens " << tokens << ", m " << m << ": " << r.message;
      EXPECT_EQ(r.tokens, tokens);
      EXPECT_EQ(r.splits, splits);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WidthsBitsTypes, PrefillTokenWidths,
                         ::testing::Combine(::testing::Values(16, 32, 64, 128, 256),
                                            ::testing::Values(4, 8),
                                            ::testing::Values(DType::kF16, DType::kBF16)));

// Narrow int4 tiles over units of odd k-block counts: 13 k-blocks split 1, 2 and 3 ways give
// units of 13, 7 + 6 and 5 + 4 + 4 blocks, so a unit's last block sits at either parity of the
// fragment sets and of the stage ring, and M = 300 at 16 tokens walks several units a CTA (19
// token tiles x 4 weight tiles x splits), carrying stage and phase across them. (Written for the
// two-block stages of prefill v13, measured slower and not kept: perf/prefill.md.)
class PrefillOddUnits : public ::testing::TestWithParam<std::tuple<int, DType>> {};

TEST_P(PrefillOddUnits, MatchesReference) {
  SF_SKIP_WITHOUT_PREFILL();
  const auto [tokens, dtype] = GetParam();
  std::mt19937_64 rng(testing::test_seed() + 311);
  for (ZeroPointKind zero : {ZeroPointKind::kNone, ZeroPointKind::kInteger}) {
    RandomWeightSpec spec;
    spec.n = 392;  // 7 strips: the last tile's second consumer idle
    spec.k = 13 * 64;
    spec.bits = 4;
    spec.group_size = 64;
    spec.zero_kind = zero;
    spec.scale_dtype = dtype;
    const QuantizedWeight w = testing::random_weight(rng, spec);
    for (int64_t m : {int64_t(tokens), int64_t(2 * tokens + 3), int64_t(300)}) {
      for (int64_t splits : {1, 2, 3}) {
        Options o = prefill_options();
        o.prefill_tokens = tokens;
        o.prefill_splits = splits;
        const auto r = testing::run_and_check(testing::gemm_case(w, dtype, m, true, o), rng());
        EXPECT_TRUE(r.ok) << "tokens " << tokens << ", m " << m << ", splits " << splits
                          << ", zero points " << (zero != ZeroPointKind::kNone) << ": "
                          << r.message;
        EXPECT_EQ(r.tokens, tokens);
        EXPECT_EQ(r.splits, splits);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(NarrowWidthsTypes, PrefillOddUnits,
                         ::testing::Combine(::testing::Values(16, 32, 64),
                                            ::testing::Values(DType::kF16, DType::kBF16)));

// More work units than CTAs: each persistent CTA walks several tiles, and the pipeline's stage
// and phase carry across tile boundaries. Both CTA layouts: 128-token tiles (one CTA per SM, three
// fragment sets) and 16-token tiles (two per SM, two sets).
TEST(PrefillPersistent, SeveralUnitsPerCta) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 303);
  for (int bits : {4, 8}) {
    RandomWeightSpec spec;
    spec.n = 2048;
    spec.k = 576;  // 9 k-blocks: an odd count per unit
    spec.bits = bits;
    spec.group_size = 64;
    const QuantizedWeight w = testing::random_weight(rng, spec);
    // 128 tokens: 9 token tiles x 16 weight tiles = 144 units for 132 CTAs at most; 16 tokens:
    // 19 x 16 = 304 units for 264 CTAs at most.
    for (const auto& [tokens, m] : {std::pair<int, int64_t>{128, 2100}, {16, 300}}) {
      GemmCase c;
      c.weight = w;
      c.m = m;
      c.bias = true;
      c.options = prefill_options();
      c.options.prefill_tokens = tokens;
      c.options.prefill_splits = 1;
      const auto r = testing::run_and_check(c, rng());
      EXPECT_TRUE(r.ok) << tokens << " tokens: " << r.message;
      EXPECT_EQ(r.splits, 1);
      EXPECT_EQ(r.tokens, tokens);
    }
  }
}

// Split-K and the single-split path are both bitwise stable run to run (no atomics anywhere), in
// replays of a captured graph, and in runs enqueued back to back on one workspace, whose kernels
// overlap under programmatic dependent launch (each run's main kernel may start while the last
// run's reduce still reads the partials it will overwrite).
TEST(PrefillDeterminism, BitwiseIdenticalRepeats) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 304);
  RandomWeightSpec spec;
  spec.n = 256;
  spec.k = 8192;
  GemmCase c;
  c.weight = testing::random_weight(rng, spec);
  c.m = 100;
  c.bias = true;
  c.options = prefill_options();
  c.repeats = 5;
  c.graph_replays = 3;
  c.back_to_back = 4;
  auto r = testing::run_and_check(c, rng());
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_GT(r.splits, 1);
  EXPECT_TRUE(r.bitwise_stable)
      << "the split-K reduce changed bits between runs, replays or back-to-back runs";
  c.options.deterministic = true;
  r = testing::run_and_check(c, rng());
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_TRUE(r.bitwise_stable);
}

// The split-K reduce's edges (reduce_kernel.cuh): 12 splits take ordered_sum past one batch of
// eight loads (piece 0, then 1-8, then 9-11); N = 4099 is not a multiple of four, so the last
// column quad stores three outputs; and M = 230 is more token rows than reduce_grid gives
// (on the H200: 5 column blocks -> 132 * 8 / 5 = 211 rows), so CTAs stride over tokens. Bitwise
// repeats, graph replays and back-to-back runs too.
TEST(PrefillSplitReduce, ManySplitsOddColumnsTokenStride) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 313);
  RandomWeightSpec spec;
  spec.n = 4099;
  spec.k = 12 * 64;
  spec.group_size = 64;
  GemmCase c;
  c.weight = testing::random_weight(rng, spec);
  c.m = 230;
  c.bias = true;
  c.options = prefill_options();
  c.options.prefill_tokens = 128;
  c.options.prefill_splits = 12;
  c.repeats = 2;
  c.graph_replays = 2;
  c.back_to_back = 3;
  const auto r = testing::run_and_check(c, rng());
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.splits, 12);
  EXPECT_TRUE(r.bitwise_stable);
}

// Router GEMVs and sharded layers (testing::kOddShapes) at prefill sizes, and at 24 tokens (the
// 32-token tiles, two CTAs per SM).
TEST(PrefillOddShapes, RoutersAndShards) {
  SF_SKIP_WITHOUT_PREFILL();
  testing::check_odd_shapes(testing::test_seed() + 305, 160, prefill_options());
  testing::check_odd_shapes(testing::test_seed() + 310, 24, prefill_options());
}

// Programmatic dependent launch on and off: prep -> main -> reduce chained, same result.
TEST(PrefillLaunch, WithAndWithoutProgrammaticDependentLaunch) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 306);
  RandomWeightSpec spec;
  spec.n = 192;
  spec.k = 4096;
  spec.act_order = true;
  const QuantizedWeight w = testing::random_weight(rng, spec);
  for (bool pdl : {true, false}) {
    GemmCase c;
    c.weight = w;
    c.m = 150;
    c.bias = true;
    c.options = prefill_options(pdl);
    c.repeats = 3;
    c.back_to_back = 3;
    const auto r = testing::run_and_check(c, rng());
    EXPECT_TRUE(r.ok) << "pdl=" << pdl << ": " << r.message;
    EXPECT_TRUE(r.bitwise_stable);
  }
}

// The auto tier's lower edge on this GPU (api/dispatch_rules.h): int4 weights go to prefill from
// M = 33, int8 from 17; the option moves the edge, and dense_min_m still caps decode.
TEST(PrefillDispatch, AutoPicksDecodeBelowPrefillMinM) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 308);
  RandomWeightSpec spec;
  spec.n = 128;
  spec.k = 512;
  GemmCase c;
  c.weight = testing::random_weight(rng, spec);
  EXPECT_EQ(testing::checked_tier(c, 17, rng()), Tier::kDecode);
  EXPECT_EQ(testing::checked_tier(c, 32, rng()), Tier::kDecode);
  EXPECT_EQ(testing::checked_tier(c, 33, rng()), Tier::kPrefill);
  c.options.prefill_min_m = 65;
  EXPECT_EQ(testing::checked_tier(c, 33, rng()), Tier::kDecode);
  c.options.dense_min_m = 16;
  EXPECT_EQ(testing::checked_tier(c, 33, rng()), Tier::kPrefill);

  spec.bits = 8;
  GemmCase c8;
  c8.weight = testing::random_weight(rng, spec);
  EXPECT_EQ(testing::checked_tier(c8, 12, rng()), Tier::kDecode);
  EXPECT_EQ(testing::checked_tier(c8, 16, rng()), Tier::kDecode);
  EXPECT_EQ(testing::checked_tier(c8, 17, rng()), Tier::kPrefill);

  // A large int4 weight (l3-70b.gate_up's shape class; plan only, no data): the same edge.
  Problem problem;
  ASSERT_TRUE(PackedGeometry::make(16384, 8192, 4, 128, &problem.geometry).ok());
  Plan plan;
  problem.m = 32;
  ASSERT_TRUE(sailfish::plan(problem, -1, Options(), &plan).ok());
  EXPECT_EQ(plan.tier, Tier::kDecode) << plan.reason;
  problem.m = 33;
  ASSERT_TRUE(sailfish::plan(problem, -1, Options(), &plan).ok());
  EXPECT_EQ(plan.tier, Tier::kPrefill) << plan.reason;
}

// The auto tier: prefill from prefill_min_m to prefill_max_m on this GPU, dense above.
TEST(PrefillDispatch, AutoPicksPrefillThenDense) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 307);
  RandomWeightSpec spec;
  spec.n = 128;
  spec.k = 512;
  GemmCase c;
  c.weight = testing::random_weight(rng, spec);
  EXPECT_EQ(testing::checked_tier(c, 1024, rng()), Tier::kPrefill);
  EXPECT_EQ(testing::checked_tier(c, 4096, rng()), Tier::kDense);
  c.options.prefill_max_m = 8192;
  EXPECT_EQ(testing::checked_tier(c, 4096, rng()), Tier::kPrefill);
}

// A forced pipeline depth outside what fits (or below three stages), a token width with no kernel,
// and an M beyond the kernel's index range, are refused by plan().
TEST(PrefillDispatch, BadStageCountIsRefused) {
  SF_SKIP_WITHOUT_PREFILL();
  Problem problem;
  problem.m = 256;
  ASSERT_TRUE(PackedGeometry::make(256, 1024, 4, 128, &problem.geometry).ok());
  Options o = prefill_options();
  o.prefill_stages = 40;
  Plan plan;
  const Status s = sailfish::plan(problem, -1, o, &plan);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("prefill_stages"), std::string::npos) << s.message();
  o.prefill_stages = 4;
  EXPECT_TRUE(sailfish::plan(problem, -1, o, &plan).ok());
  EXPECT_EQ(plan.prefill.stages, 4);
  o.prefill_tokens = 96;  // no 96-token kernel
  const Status width = sailfish::plan(problem, -1, o, &plan);
  EXPECT_EQ(width.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(width.message().find("prefill_tokens is 96"), std::string::npos) << width.message();
  // An M whose tiles overflow the kernel's 32-bit unit index is refused, not wrapped.
  problem.m = int64_t(1) << 40;
  const Status huge = sailfish::plan(problem, -1, prefill_options(), &plan);
  EXPECT_EQ(huge.code(), StatusCode::kUnsupported) << huge.to_string();
  EXPECT_NE(huge.message().find("tier dense"), std::string::npos) << huge.message();
}

}  // namespace
}  // namespace sailfish
