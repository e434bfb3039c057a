// The float64 MoE GEMM (reference_moe_gemm) against a direct per-choice formula, on a hand-worked
// layer and on random ones, in every input and output form; expert parallelism as a split of the
// same layer over ranks; and its refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sailfish/moe.h"
#include "sailfish/reference.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

// One row of W = (9 - 8) * scale everywhere: a weight whose product is scale * sum(a).
QuantizedWeight flat_weight(int64_t n, int64_t k, const std::vector<float>& row_scales) {
  QuantizedWeight w;
  w.n = n;
  w.k = k;
  w.bits = 4;
  w.group_size = kChannelwise;
  w.codes.assign(static_cast<size_t>(n * k), 9);
  w.scales = row_scales;
  return w;
}

TEST(MoeReference, HandWorkedLayer) {
  // Two tokens, top 2 of 3 experts; expert e's rows are (e + 1) and 10 (e + 1) times sum(a).
  MoeRouting r;
  r.tokens = 2;
  r.top_k = 2;
  r.experts = 3;
  r.topk_ids = {2, 0, 1, 2};
  r.topk_weights = {0.75f, 0.25f, 0.5f, 0.5f};
  std::vector<QuantizedWeight> experts;
  for (int e = 0; e < 3; ++e) experts.push_back(flat_weight(2, 16, {e + 1.0f, 10.0f * (e + 1)}));
  std::vector<double> a(2 * 16, 0.0);
  a[0] = 1.0;  // token 0 sums to 3
  a[1] = 2.0;
  a[16] = -1.0;  // token 1 sums to -1
  const std::vector<double> bias = {0.5, 0, 0, 0, 0, -4};

  std::vector<double> y(4 * 2);
  ASSERT_TRUE(reference_moe_gemm(r, {MoeInput::kToken, MoeOutput::kChoice, false}, experts,
                                 a.data(), bias.data(), y.data())
                  .ok());
  EXPECT_EQ(y, (std::vector<double>{9, 90 - 4, 3 + 0.5, 30, -2, -20, -3, -30 - 4}));

  std::vector<double> sum(2 * 2);
  ASSERT_TRUE(reference_moe_gemm(r, {MoeInput::kToken, MoeOutput::kTokenSum, true}, experts,
                                 a.data(), nullptr, sum.data())
                  .ok());
  EXPECT_DOUBLE_EQ(sum[0], 0.75 * 9 + 0.25 * 3);
  EXPECT_DOUBLE_EQ(sum[1], 0.75 * 90 + 0.25 * 30);
  EXPECT_DOUBLE_EQ(sum[2], 0.5 * -2 + 0.5 * -3);
  EXPECT_DOUBLE_EQ(sum[3], 0.5 * -20 + 0.5 * -30);
}

struct RandomLayer {
  MoeRouting routing;
  std::vector<QuantizedWeight> experts;  // global, one per expert
  std::vector<double> bias;              // [experts][n]
};

RandomLayer random_layer(std::mt19937_64& rng, int64_t tokens, int top_k, int experts, int64_t n,
                         int64_t k) {
  RandomLayer layer;
  layer.routing.tokens = tokens;
  layer.routing.top_k = top_k;
  layer.routing.experts = experts;
  for (int64_t t = 0; t < tokens; ++t) {  // distinct experts per token, as a router picks them
    std::vector<int32_t> order(static_cast<size_t>(experts));
    for (int e = 0; e < experts; ++e) order[static_cast<size_t>(e)] = e;
    std::shuffle(order.begin(), order.end(), rng);
    for (int j = 0; j < top_k; ++j) {
      layer.routing.topk_ids.push_back(order[static_cast<size_t>(j)]);
      layer.routing.topk_weights.push_back(std::uniform_real_distribution<float>(0, 1)(rng));
    }
  }
  testing::RandomWeightSpec spec;
  spec.n = n;
  spec.k = k;
  spec.group_size = 32;
  for (int e = 0; e < experts; ++e) {
    spec.zero_kind = e % 2 ? ZeroPointKind::kInteger : ZeroPointKind::kNone;
    layer.experts.push_back(testing::random_weight(rng, spec));
  }
  layer.bias = testing::random_doubles(rng, static_cast<size_t>(experts * n));
  return layer;
}

// The formula of include/sailfish/moe.h, one choice row at a time, from dequantize_reference.
std::vector<double> direct_moe(const RandomLayer& layer, const MoeGemm& gemm, const double* a,
                               bool with_bias) {
  const MoeRouting& r = layer.routing;
  const int64_t n = layer.experts[0].n, k = layer.experts[0].k;
  std::vector<double> y(static_cast<size_t>(gemm.output_rows(r) * n), 0.0);
  for (int64_t row = 0; row < r.choices(); ++row) {
    const int32_t e = r.topk_ids[static_cast<size_t>(row)];
    if (r.local_expert(e) < 0) continue;
    const std::vector<double> w = dequantize_reference(layer.experts[static_cast<size_t>(e)]);
    const double* input = a + (gemm.input == MoeInput::kToken ? row / r.top_k : row) * k;
    const double s = gemm.apply_router_weights ? r.topk_weights[static_cast<size_t>(row)] : 1.0;
    const int64_t target = gemm.output == MoeOutput::kTokenSum ? row / r.top_k : row;
    for (int64_t nn = 0; nn < n; ++nn) {
      double dot = with_bias ? layer.bias[static_cast<size_t>(e * n + nn)] : 0.0;
      for (int64_t kk = 0; kk < k; ++kk) dot += input[kk] * w[static_cast<size_t>(nn * k + kk)];
      y[static_cast<size_t>(target * n + nn)] += s * dot;
    }
  }
  return y;
}

// This rank's weights and bias rows, in local order.
void local_slice(const RandomLayer& layer, std::vector<QuantizedWeight>* weights,
                 std::vector<double>* bias) {
  const int64_t n = layer.experts[0].n;
  weights->assign(static_cast<size_t>(layer.routing.local_experts()), QuantizedWeight());
  bias->assign(weights->size() * static_cast<size_t>(n), 0.0);
  for (int e = 0; e < layer.routing.experts; ++e) {
    const int l = layer.routing.local_expert(e);
    if (l < 0) continue;
    (*weights)[static_cast<size_t>(l)] = layer.experts[static_cast<size_t>(e)];
    std::copy(layer.bias.begin() + e * n, layer.bias.begin() + (e + 1) * n, bias->begin() + l * n);
  }
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-9 * (1.0 + std::fabs(want[i]))) << what << ", element " << i;
  }
}

TEST(MoeReference, RandomLayersInEveryFormMatchTheDirectFormula) {
  std::mt19937_64 rng(testing::test_seed());
  for (int trial = 0; trial < 12; ++trial) {
    const int experts = std::uniform_int_distribution<int>(1, 9)(rng);
    const int top_k = std::uniform_int_distribution<int>(1, std::min(experts, 4))(rng);
    const int64_t tokens = std::uniform_int_distribution<int64_t>(1, 7)(rng);
    RandomLayer layer = random_layer(rng, tokens, top_k, experts, 24, 64);
    if (trial % 3 == 2) {  // expert parallelism: this rank holds the odd experts, in reverse
      layer.routing.expert_map.assign(static_cast<size_t>(experts), -1);
      int next = 0;
      for (int e = experts - 1; e >= 0; --e) {
        if (e % 2) layer.routing.expert_map[static_cast<size_t>(e)] = next++;
      }
      if (next == 0) layer.routing.expert_map.clear();
    }
    std::vector<QuantizedWeight> weights;
    std::vector<double> bias;
    local_slice(layer, &weights, &bias);
    const std::vector<double> a_token = testing::random_doubles(rng, size_t(tokens) * 64);
    const std::vector<double> a_choice =
        testing::random_doubles(rng, size_t(layer.routing.choices()) * 64);
    for (MoeInput input : {MoeInput::kToken, MoeInput::kChoice}) {
      for (MoeOutput output : {MoeOutput::kChoice, MoeOutput::kTokenSum}) {
        for (bool scaled : {false, true}) {
          for (bool with_bias : {false, true}) {
            const MoeGemm gemm{input, output, scaled};
            const double* a = input == MoeInput::kToken ? a_token.data() : a_choice.data();
            std::vector<double> y(static_cast<size_t>(gemm.output_rows(layer.routing) * 24), 7.0);
            const Status status = reference_moe_gemm(layer.routing, gemm, weights, a,
                                                     with_bias ? bias.data() : nullptr, y.data());
            const std::string what = "trial " + std::to_string(trial) + ", input " +
                                     moe_input_name(input) + ", output " + moe_output_name(output) +
                                     (scaled ? ", scaled" : "") + (with_bias ? ", bias" : "");
            ASSERT_TRUE(status.ok()) << what << ": " << status.to_string();
            expect_close(y, direct_moe(layer, gemm, a, with_bias), what);
          }
        }
      }
    }
  }
}

// Expert parallelism as engines use it: the experts split over ranks, each rank's token sums
// added, give the single-rank layer.
TEST(MoeReference, RanksOutputsAddUpToTheWholeLayer) {
  std::mt19937_64 rng(testing::test_seed() + 1);
  RandomLayer layer = random_layer(rng, 5, 3, 8, 16, 64);
  const MoeGemm down{MoeInput::kChoice, MoeOutput::kTokenSum, true};
  const std::vector<double> a = testing::random_doubles(rng, size_t(layer.routing.choices()) * 64);
  std::vector<double> whole(5 * 16);
  ASSERT_TRUE(reference_moe_gemm(layer.routing, down, layer.experts, a.data(), layer.bias.data(),
                                 whole.data())
                  .ok());
  std::vector<double> summed(whole.size(), 0.0);
  for (int rank = 0; rank < 3; ++rank) {  // experts e with e % 3 == rank
    RandomLayer part = layer;
    part.routing.expert_map.assign(8, -1);
    int next = 0;
    for (int e = rank; e < 8; e += 3) part.routing.expert_map[static_cast<size_t>(e)] = next++;
    std::vector<QuantizedWeight> weights;
    std::vector<double> bias;
    local_slice(part, &weights, &bias);
    std::vector<double> y(whole.size());
    ASSERT_TRUE(
        reference_moe_gemm(part.routing, down, weights, a.data(), bias.data(), y.data()).ok());
    for (size_t i = 0; i < y.size(); ++i) summed[i] += y[i];
  }
  expect_close(summed, whole, "three ranks");
}

TEST(MoeReference, RefusesWeightsThatDoNotFitTheRouting) {
  MoeRouting r;
  r.tokens = 1;
  r.top_k = 1;
  r.experts = 2;
  r.topk_ids = {1};
  r.topk_weights = {1.0f};
  const std::vector<double> a(16, 1.0);
  std::vector<double> y(2);
  const MoeGemm gemm;
  const std::vector<QuantizedWeight> one = {flat_weight(2, 16, {1, 1})};
  Status s = reference_moe_gemm(r, gemm, one, a.data(), nullptr, y.data());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("1 expert weights for 2 local experts"), std::string::npos)
      << s.message();

  const std::vector<QuantizedWeight> mixed = {flat_weight(2, 16, {1, 1}),
                                              flat_weight(3, 16, {1, 1, 1})};
  s = reference_moe_gemm(r, gemm, mixed, a.data(), nullptr, y.data());
  EXPECT_NE(s.message().find("expert 1 is 3 x 16 but expert 0 is 2 x 16"), std::string::npos)
      << s.message();

  const std::vector<QuantizedWeight> two = {flat_weight(2, 16, {1, 1}), flat_weight(2, 16, {1, 1})};
  s = reference_moe_gemm(r, gemm, two, nullptr, nullptr, y.data());
  EXPECT_NE(s.message().find("must be non-null"), std::string::npos) << s.message();

  r.topk_ids = {2};
  s = reference_moe_gemm(r, gemm, two, a.data(), nullptr, y.data());
  EXPECT_NE(s.message().find("topk_ids[0][0] is 2"), std::string::npos) << s.message();

  r.topk_ids = {0};
  r.expert_map = {-1, -1};
  s = reference_moe_gemm(r, gemm, {}, a.data(), nullptr, y.data());
  EXPECT_NE(s.message().find("no local expert"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sailfish
