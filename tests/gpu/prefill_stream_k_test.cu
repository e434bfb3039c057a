// The prefill tier's Stream-K grid (src/prefill/stream_k.h) against the float64 reference: every
// token width, int4 and int8, zero points, act-order, bias; runs of one k-block (a tile shared by
// a dozen CTAs), runs over whole tiles with a shared piece at each end, several m tiles; bitwise
// stable repeats; and the plan's choice and its refusals. Outputs are poisoned before each run
// (gemm_check), so a tile the fixup skipped by mistake fails as unwritten.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "prefill_test_helpers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::GemmCase;
using testing::prefill_options;
using testing::RandomWeightSpec;

Options stream_k_options(int tokens) {
  Options o = prefill_options();
  o.prefill_tokens = tokens;
  o.prefill_stream_k = true;
  return o;
}

class PrefillStreamKWidths : public ::testing::TestWithParam<std::tuple<int, int, DType>> {};

TEST_P(PrefillStreamKWidths, MatchesReference) {
  SF_SKIP_WITHOUT_PREFILL();
  const auto [tokens, bits, dtype] = GetParam();
  std::mt19937_64 rng(testing::test_seed() + 321);
  RandomWeightSpec spec;
  spec.n = 392;      // 7 strips: the last tile's second consumer idle
  spec.k = 13 * 64;  // 4 tiles x 13 k-blocks = 52 runs of one k-block: 13 owners a tile
  spec.bits = bits;
  spec.group_size = 64;
  spec.zero_kind = bits == 4 ? ZeroPointKind::kInteger : ZeroPointKind::kNone;
  spec.scale_dtype = dtype;
  const QuantizedWeight w = testing::random_weight(rng, spec);
  for (int64_t m : {int64_t(1), int64_t(tokens - 1), int64_t(tokens), int64_t(2 * tokens + 3)}) {
    if (m < 1) continue;
    const auto r =
        testing::run_and_check(testing::gemm_case(w, dtype, m, true, stream_k_options(tokens)),
                               rng());
    EXPECT_TRUE(r.ok) << "tokens " << tokens << ", m " << m << ": " << r.message;
    EXPECT_TRUE(r.prefill_stream_k);
    EXPECT_EQ(r.splits, 1);
    EXPECT_EQ(r.tokens, tokens);
  }
}

INSTANTIATE_TEST_SUITE_P(WidthsBitsTypes, PrefillStreamKWidths,
                         ::testing::Combine(::testing::Values(16, 32, 64, 128, 256),
                                            ::testing::Values(4, 8),
                                            ::testing::Values(DType::kF16, DType::kBF16)));

// A grid of one CTA. Runs longer than a tile: 529 tiles (the last half empty) of 2 k-blocks on
// at most 264 CTAs, so a run holds whole tiles, stored by their CTA, between its two shared
// pieces. A Llama-sized strip count (l3-8b.qkv at 64 tokens: 48 tiles, ~12 k-blocks a run) with
// act-order, whose activations go through the prep kernel first; PDL on and off.
TEST(PrefillStreamK, WholeTilesBetweenSharedPieces) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 322);
  {
    RandomWeightSpec spec;
    spec.n = 67648;
    spec.k = 128;
    spec.group_size = 32;
    const QuantizedWeight w = testing::random_weight(rng, spec);
    for (int tokens : {16, 64}) {
      const auto r = testing::run_and_check(
          testing::gemm_case(w, DType::kBF16, 16, true, stream_k_options(tokens)), rng());
      EXPECT_TRUE(r.ok) << tokens << " tokens: " << r.message;
      EXPECT_TRUE(r.prefill_stream_k);
      EXPECT_GT(r.prefill_grid, 1);
    }
  }
  {
    // One tile of one k-block: a grid of one CTA, whose run shares nothing (no fixup launch).
    RandomWeightSpec spec;
    spec.n = 100;
    spec.k = 64;
    spec.group_size = 32;
    const QuantizedWeight w = testing::random_weight(rng, spec);
    const auto r = testing::run_and_check(
        testing::gemm_case(w, DType::kBF16, 5, true, stream_k_options(16)), rng());
    EXPECT_TRUE(r.ok) << r.message;
    EXPECT_TRUE(r.prefill_stream_k);
    EXPECT_EQ(r.prefill_grid, 1);
  }
  RandomWeightSpec spec;
  spec.n = 6144;
  spec.k = 4096;
  spec.act_order = true;
  const QuantizedWeight w = testing::random_weight(rng, spec);
  for (bool pdl : {true, false}) {
    Options o = stream_k_options(64);
    o.programmatic_dependent_launch = pdl;
    const auto r = testing::run_and_check(testing::gemm_case(w, DType::kBF16, 64, true, o), rng());
    EXPECT_TRUE(r.ok) << "pdl " << pdl << ": " << r.message;
    EXPECT_TRUE(r.prefill_stream_k);
  }
}

// The fixup sums in CTA order and nothing is atomic: the same bits every run, in graph replays, and
// in runs enqueued back to back on one workspace (each run's main kernel may start while the last
// run's fixup still reads the slots it will overwrite).
TEST(PrefillStreamK, BitwiseIdenticalRepeats) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 323);
  RandomWeightSpec spec;
  spec.n = 1024;
  spec.k = 8192;
  GemmCase c;
  c.weight = testing::random_weight(rng, spec);
  c.m = 40;
  c.bias = true;
  c.options = stream_k_options(64);
  c.repeats = 5;
  c.graph_replays = 2;
  c.back_to_back = 3;
  const auto r = testing::run_and_check(c, rng());
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_TRUE(r.prefill_stream_k);
  EXPECT_TRUE(r.bitwise_stable)
      << "the Stream-K fixup changed bits between runs, replays or back-to-back runs";
}

// What the plan chooses (no data): Stream-K where the split grid leaves a partial wave, the split
// grid where it fills the SMs or with several m tiles; a forced split depth with Stream-K forced
// is refused, and prefill_stream_k = 0 keeps the split grid.
TEST(PrefillStreamK, PlanChoosesAndRefuses) {
  SF_SKIP_WITHOUT_PREFILL();
  const int sms = testing::device_sm_count();
  ASSERT_GT(sms, 0);
  Problem problem;
  ASSERT_TRUE(PackedGeometry::make(57344, 8192, 4, 128, &problem.geometry).ok());
  problem.m = 64;
  Plan plan;
  ASSERT_TRUE(sailfish::plan(problem, -1, prefill_options(), &plan).ok());
  if (sms == 132) {  // the H200's count, on which the cost model's examples are worked out
    EXPECT_TRUE(plan.prefill.stream_k) << "l3-70b.gate_up at M = 64";
    EXPECT_EQ(plan.prefill.grid, 264);
  }
  if (plan.prefill.stream_k) EXPECT_EQ(plan.prefill.splits, 1);
  problem.m = 1024;
  ASSERT_TRUE(sailfish::plan(problem, -1, prefill_options(), &plan).ok());
  EXPECT_FALSE(plan.prefill.stream_k) << "several m tiles";
  problem.m = 64;
  Options off = prefill_options();
  off.prefill_stream_k = false;
  ASSERT_TRUE(sailfish::plan(problem, -1, off, &plan).ok());
  EXPECT_FALSE(plan.prefill.stream_k);
  Options both = prefill_options();
  both.prefill_stream_k = true;
  both.prefill_splits = 2;
  const Status s = sailfish::plan(problem, -1, both, &plan);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("prefill_stream_k"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("prefill_splits"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sailfish
