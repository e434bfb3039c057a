// Batch invariance (Options::batch_invariant; src/prefill/batch_invariant.h): a row's output bits
// do not depend on how many other rows run with it. A run of M tokens must give, bit for bit, the
// first M rows of a run of more tokens whose first M rows are the same activations, at every M
// from one token to past two tiles; every run is also checked against the float64 reference.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "prefill_test_helpers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::GemmCase;

Options batch_invariant_options() {
  Options options;
  options.batch_invariant = true;
  return options;
}

// Every format, an odd and an aligned shape, bias on, fp16 and bf16 in turn.
TEST(BatchInvariance, RowsBitwiseEqualAcrossM) {
  SF_SKIP_WITHOUT_PREFILL();
  std::mt19937_64 rng(testing::test_seed() + 401);
  const int64_t shapes[][2] = {{200, 1000}, {1024, 4096}};
  constexpr int64_t kLargest = 150;
  const int64_t smaller[] = {1, 2, 7, 16, 33, 64, 65, 100};
  for (int format_index = 0; format_index < testing::kWeightFormatCount; ++format_index) {
    const testing::WeightFormat& f = testing::kWeightFormats[format_index];
    for (const auto& shape : shapes) {
      const DType dtype = testing::format_test_dtype(format_index);
      const QuantizedWeight w = testing::random_weight(
          rng, testing::format_spec(f, shape[0], shape[1], 128, false, dtype));
      const uint64_t seed = rng();
      const GemmCase largest =
          testing::gemm_case(w, dtype, kLargest, true, batch_invariant_options());
      const auto all = testing::run_and_check(largest, seed);
      const std::string shape_name =
          std::string(f.name) + " n=" + std::to_string(shape[0]) + " k=" + std::to_string(shape[1]);
      ASSERT_TRUE(all.ok) << shape_name << " m=" << kLargest << ": " << all.message;
      EXPECT_EQ(all.tier, Tier::kPrefill) << shape_name;
      EXPECT_FALSE(all.prefill_stream_k) << shape_name;
      for (const int64_t m : smaller) {
        GemmCase c = largest;
        c.m = m;
        const auto r = testing::run_and_check(c, seed);
        const std::string where = shape_name + " m=" + std::to_string(m);
        ASSERT_TRUE(r.ok) << where << ": " << r.message;
        EXPECT_EQ(r.tier, Tier::kPrefill) << where;
        EXPECT_EQ(r.tokens, all.tokens) << where;
        EXPECT_EQ(r.splits, all.splits) << where;
        const std::vector<uint16_t> first_rows(
            all.output_bits.begin(),
            all.output_bits.begin() + static_cast<std::ptrdiff_t>(m * w.n));
        EXPECT_EQ(r.output_bits, first_rows)
            << where << ": rows differ from the same rows at m=" << kLargest;
      }
    }
  }
}

// The mode's conflicts are refused with what is accepted: another tier forced, Stream-K forced.
// Forced widths and depths are the caller's to fix and are kept at every M.
TEST(BatchInvariance, RefusesOtherTiersAndStreamK) {
  SF_SKIP_WITHOUT_PREFILL();
  Problem problem;
  ASSERT_TRUE(PackedGeometry::make(4096, 4096, 4, 128, &problem.geometry).ok());
  Plan plan;
  for (const Tier tier : {Tier::kDecode, Tier::kDense}) {
    Options options = batch_invariant_options();
    options.tier = tier;
    problem.m = 1;
    const Status st = sailfish::plan(problem, -1, options, &plan);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << tier_name(tier);
    EXPECT_NE(st.message().find("auto or prefill"), std::string::npos) << st.message();
  }
  Options stream_k = batch_invariant_options();
  stream_k.prefill_stream_k = true;
  const Status st = sailfish::plan(problem, -1, stream_k, &plan);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("prefill_stream_k"), std::string::npos) << st.message();

  Options forced = batch_invariant_options();
  forced.prefill_tokens = 32;
  forced.prefill_splits = 3;
  for (const int64_t m : {int64_t(1), int64_t(40), int64_t(3000)}) {
    problem.m = m;
    ASSERT_TRUE(sailfish::plan(problem, -1, forced, &plan).ok()) << "m=" << m;
    EXPECT_TRUE(plan.batch_invariant);
    EXPECT_EQ(plan.tier, Tier::kPrefill) << "m=" << m;
    EXPECT_EQ(plan.prefill.tokens, 32) << "m=" << m;
    EXPECT_EQ(plan.prefill.splits, 3) << "m=" << m;
    EXPECT_FALSE(plan.prefill.stream_k) << "m=" << m;
  }
}

}  // namespace
}  // namespace sailfish
