// The prefill tier's split grid summed inside thread-block clusters (src/prefill/cluster_reduce.h)
// against the float64 reference and bit for bit against the same plan through the reduce kernel
// (prefill_cluster_reduce = 0): every cluster width (16, 32 and 64 tokens), int4 and int8, zero
// points, bias, 2 to 8 splits (more ranks than token groups at 16 tokens), several m tiles, a last
// tile with one strip; act-order and unaligned K through the prep kernel; Llama-sized plans under
// repeats, graph replays and back-to-back runs; and what the plan chooses. Outputs are poisoned
// before each run (gemm_check), so a token group no rank stored fails as unwritten.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "prefill/cluster_reduce.h"
#include "prefill_test_helpers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::GemmCase;
using testing::prefill_options;
using testing::RandomWeightSpec;

Options split_options(int tokens, int splits, bool cluster) {
  Options o = prefill_options();
  o.prefill_tokens = tokens;
  o.prefill_splits = splits;
  o.prefill_cluster_reduce = cluster;
  return o;
}

// Runs c with the cluster epilogue forced on and off; both must pass the reference, take the path
// asked for, and store the same bits (the clustered sum adds in the reduce's order).
void expect_cluster_matches_reduce(const GemmCase& c, int tokens, int splits, uint64_t seed,
                                   const std::string& where) {
  const std::vector<testing::GemmCheckResult> r = testing::run_and_check_variants(
      c, {split_options(tokens, splits, true), split_options(tokens, splits, false)}, seed);
  ASSERT_EQ(r.size(), 2u) << where;
  EXPECT_TRUE(r[0].ok) << where << ", cluster: " << r[0].message;
  EXPECT_TRUE(r[1].ok) << where << ", reduce: " << r[1].message;
  EXPECT_TRUE(r[0].prefill_cluster_reduce) << where;
  EXPECT_FALSE(r[1].prefill_cluster_reduce) << where;
  EXPECT_EQ(r[0].splits, splits) << where;
  EXPECT_EQ(r[0].tokens, tokens) << where;
  EXPECT_TRUE(r[0].output_bits == r[1].output_bits)
      << where << ": the clustered sum's bits differ from the reduce kernel's";
}

class PrefillClusterWidths : public ::testing::TestWithParam<std::tuple<int, int, DType>> {};

TEST_P(PrefillClusterWidths, MatchesReferenceAndReduceBits) {
  SF_SKIP_WITHOUT_PREFILL();
  const auto [tokens, bits, dtype] = GetParam();
  std::mt19937_64 rng(testing::test_seed() + 331);
  RandomWeightSpec spec;
  spec.n = 392;      // 7 strips: the last tile's second consumer has no rows to store
  spec.k = 13 * 64;  // 13 k-blocks: uneven splits, one or two k-blocks a split at 8
  spec.bits = bits;
  spec.group_size = 64;
  spec.zero_kind = bits == 4 ? ZeroPointKind::kInteger : ZeroPointKind::kNone;
  spec.scale_dtype = dtype;
  const QuantizedWeight w = testing::random_weight(rng, spec);
  for (int splits : {2, 3, 8}) {
    for (int64_t m : {int64_t(1), int64_t(tokens - 1), int64_t(tokens), int64_t(2 * tokens + 3)}) {
      const GemmCase c = testing::gemm_case(w, dtype, m, true, prefill_options());
      expect_cluster_matches_reduce(c, tokens, splits, rng(),
                                    "tokens " + std::to_string(tokens) + ", splits " +
                                        std::to_string(splits) + ", m " + std::to_string(m));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WidthsBitsTypes, PrefillClusterWidths,
                         ::testing::Combine(::testing::Values(16, 32, 64),
                                            ::testing::Values(4, 8),
                                            ::testing::Values(DType::kF16, DType::kBF16)));

// Every depth a cluster takes (2..8: the odd ones leave ranks with unequal shares of the token
// groups), float zero points, group 32, no bias.
TEST(PrefillClusterReduce, EveryDepth) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 332);
  RandomWeightSpec spec;
  spec.n = 640;
  spec.k = 24 * 64;
  spec.group_size = 32;
  spec.zero_kind = ZeroPointKind::kFloat;
  const QuantizedWeight w = testing::random_weight(rng, spec);
  for (int splits = 2; splits <= prefill::kMaxClusterSplits; ++splits) {
    const GemmCase c = testing::gemm_case(w, DType::kBF16, 50, false, prefill_options());
    expect_cluster_matches_reduce(c, 64, splits, rng(), "splits " + std::to_string(splits));
  }
}

// Act-order and K not a multiple of 8 (the prep kernel copies the activations first), and the
// router and sharded shapes every tier serves, with the clusters forced on.
TEST(PrefillClusterReduce, PrepKernelAndOddShapes) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 333);
  for (int64_t k : {int64_t(4096), int64_t(4100)}) {
    RandomWeightSpec spec;
    spec.n = 1024;
    spec.k = k;
    spec.act_order = k == 4096;
    spec.group_size = 128;
    const QuantizedWeight w = testing::random_weight(rng, spec);
    const GemmCase c = testing::gemm_case(w, DType::kF16, 33, true, prefill_options());
    expect_cluster_matches_reduce(c, 64, 4, rng(), "k " + std::to_string(k));
  }
  testing::check_odd_shapes(rng(), 40, split_options(64, 3, true));
}

// The default plan of a Llama-3 layer at M = 64 (l3-8b.qkv: 48 tiles of 5 splits on an H200),
// forced on so that any GPU runs the path: the same bits every run, in graph replays and in runs
// enqueued back to back (nothing of a run stays in the workspace for the next), PDL on and off.
TEST(PrefillClusterReduce, LlamaShapeBitwiseStable) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 334);
  RandomWeightSpec spec;
  spec.n = 6144;
  spec.k = 4096;
  GemmCase c;
  c.weight = testing::random_weight(rng, spec);
  c.m = 64;
  c.bias = true;
  c.repeats = 3;
  c.graph_replays = 2;
  c.back_to_back = 3;
  for (bool pdl : {true, false}) {
    c.options = prefill_options(pdl);
    c.options.prefill_cluster_reduce = true;
    const auto r = testing::run_and_check(c, rng());
    EXPECT_TRUE(r.ok) << "pdl " << pdl << ": " << r.message;
    EXPECT_TRUE(r.bitwise_stable) << "pdl " << pdl;
    if (r.splits >= 2 && r.splits <= prefill::kMaxClusterSplits) {
      EXPECT_TRUE(r.prefill_cluster_reduce) << "pdl " << pdl << ", " << r.splits << " splits";
    }
  }
}

// What the plan chooses (no data). l3-70b.qkv at M = 64 is 80 tiles of 3 splits at 64 tokens
// (config.h): on an H200 every cluster of 3 is resident at once, so the default takes the
// clusters and keeps no partials in the workspace. 0 keeps the reduce; 1 changes nothing where no
// cluster fits (one split, 128-token tiles, Stream-K), and deterministic plans may take it (the
// same bits as the reduce's).
TEST(PrefillClusterReduce, PlanChooses) {
  SF_SKIP_WITHOUT_PREFILL();
  const int sms = testing::device_sm_count();
  ASSERT_GT(sms, 0);
  Problem problem;
  ASSERT_TRUE(PackedGeometry::make(10240, 8192, 4, 128, &problem.geometry).ok());
  problem.m = 64;
  Plan plan;
  ASSERT_TRUE(sailfish::plan(problem, -1, prefill_options(), &plan).ok());
  const int64_t tiles = int64_t(plan.prefill.n_tiles) * plan.prefill.m_tiles;
  if (sms == 132) {
    EXPECT_EQ(plan.prefill.tokens, 64);
    EXPECT_EQ(plan.prefill.splits, 3);
    EXPECT_TRUE(plan.prefill.cluster_reduce) << "l3-70b.qkv at M = 64 on an H200";
  }
  if (plan.prefill.cluster_reduce) {
    EXPECT_EQ(plan.prefill.grid, tiles * plan.prefill.splits);
    EXPECT_EQ(workspace_size(plan), 0u) << "a clustered plan keeps no partials";
  }
  Options deterministic = prefill_options();
  deterministic.deterministic = true;
  Plan det;
  ASSERT_TRUE(sailfish::plan(problem, -1, deterministic, &det).ok());
  EXPECT_EQ(det.prefill.cluster_reduce, plan.prefill.cluster_reduce);

  Options off = prefill_options();
  off.prefill_cluster_reduce = false;
  ASSERT_TRUE(sailfish::plan(problem, -1, off, &plan).ok());
  EXPECT_FALSE(plan.prefill.cluster_reduce);
  if (plan.prefill.splits > 1) EXPECT_GT(workspace_size(plan), 0u);

  Options on = prefill_options();
  on.prefill_cluster_reduce = true;
  on.prefill_splits = 1;
  ASSERT_TRUE(sailfish::plan(problem, -1, on, &plan).ok());
  EXPECT_FALSE(plan.prefill.cluster_reduce) << "one split";
  on.prefill_splits = 2;
  on.prefill_tokens = 128;
  ASSERT_TRUE(sailfish::plan(problem, -1, on, &plan).ok());
  EXPECT_FALSE(plan.prefill.cluster_reduce) << "128-token tiles";
  on.prefill_splits.reset();
  on.prefill_tokens.reset();
  on.prefill_stream_k = true;
  ASSERT_TRUE(sailfish::plan(problem, -1, on, &plan).ok());
  EXPECT_FALSE(plan.prefill.cluster_reduce) << "Stream-K";
}

}  // namespace
}  // namespace sailfish
