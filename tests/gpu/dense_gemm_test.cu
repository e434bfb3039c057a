// The dense tier (dequantize + cuBLASLt) against the float64 reference: every format, group
// size, act-order, bias, both activation types, the M list of the issue, odd shapes.
#include <gtest/gtest.h>

#include <tuple>

#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::GemmCase;
using testing::RandomWeightSpec;

Options dense_options() {
  Options o;
  o.tier = Tier::kDense;
  return o;
}

class DenseFormats
    : public ::testing::TestWithParam<std::tuple<int, int, bool, DType>> {};

TEST_P(DenseFormats, MatchesReference) {
  SF_SKIP_WITHOUT_GPU();
  const auto [format_index, group_size, act_order, dtype] = GetParam();
  const testing::WeightFormat& f = testing::kWeightFormats[format_index];
  std::mt19937_64 rng(testing::test_seed() + 101);
  // An odd shape (padding in both dimensions) and an aligned one; two M values each.
  const int64_t shapes[][2] = {{200, 520}, {128, 512}};
  for (const auto& shape : shapes) {
    for (int64_t m : {int64_t(5), int64_t(33)}) {
      const RandomWeightSpec spec =
          testing::format_spec(f, shape[0], shape[1], group_size, act_order, dtype);
      const GemmCase c = testing::gemm_case(testing::random_weight(rng, spec), dtype, m,
                                            (m % 2) == 1, dense_options());
      const auto r = testing::run_and_check(c, rng());
      EXPECT_TRUE(r.ok) << f.name << ": " << r.message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllFormats, DenseFormats,
    ::testing::Combine(::testing::Range(0, testing::kWeightFormatCount),
                       ::testing::Values(32, 64, 128, 256, -1),
                       ::testing::Bool(), ::testing::Values(DType::kF16, DType::kBF16)));

// Every M of the issue's list on one format per bit width, both activation types.
class DenseMSweep : public ::testing::TestWithParam<std::tuple<int, DType>> {};

TEST_P(DenseMSweep, EveryM) {
  SF_SKIP_WITHOUT_GPU();
  const auto [bits, dtype] = GetParam();
  std::mt19937_64 rng(testing::test_seed() + 102);
  RandomWeightSpec spec;
  spec.n = 136;
  spec.k = 384;
  spec.bits = bits;
  spec.group_size = 128;
  spec.scale_dtype = dtype;
  const QuantizedWeight w = testing::random_weight(rng, spec);
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= 17; ++m) ms.push_back(m);
  for (int64_t m : {31, 32, 33, 64, 127, 128, 129, 1024, 4097}) ms.push_back(m);
  for (int64_t m : ms) {
    const auto r = testing::run_and_check(testing::gemm_case(w, dtype, m, true, dense_options()),
                                          rng());
    EXPECT_TRUE(r.ok) << r.message;
  }
}

INSTANTIATE_TEST_SUITE_P(BitsAndTypes, DenseMSweep,
                         ::testing::Combine(::testing::Values(4, 8),
                                            ::testing::Values(DType::kF16, DType::kBF16)));

// The N-chunked variant (forced, with small chunks so several run) equals the unchunked result's
// accuracy and writes every column.
TEST(DenseChunked, ForcedSmallChunks) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 103);
  RandomWeightSpec spec;
  spec.n = 300;  // 5 chunks of 64 rows, the last one short
  spec.k = 256;
  spec.zero_kind = ZeroPointKind::kInteger;
  spec.act_order = true;
  GemmCase c;
  c.weight = testing::random_weight(rng, spec);
  c.m = 19;
  c.bias = true;
  c.options = dense_options();
  c.options.dense_force_chunked = true;
  c.options.dense_chunk_rows = 64;
  const auto r = testing::run_and_check(c, rng());
  EXPECT_TRUE(r.ok) << r.message;
}

// Real layer shapes after tensor-parallel sharding, which are not multiples of 128.
TEST(DenseOddShapes, ShardedLayers) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 104);
  const int64_t shapes[][2] = {{10944, 256}, {256, 7392}, {32, 2880}, {8256, 192}};
  for (const auto& shape : shapes) {
    RandomWeightSpec spec;
    spec.n = shape[0];
    spec.k = shape[1];
    spec.group_size = 32;
    GemmCase c;
    c.weight = testing::random_weight(rng, spec);
    c.m = 3;
    c.bias = true;
    c.options = dense_options();
    const auto r = testing::run_and_check(c, rng());
    EXPECT_TRUE(r.ok) << r.message;
  }
}

}  // namespace
}  // namespace sailfish
