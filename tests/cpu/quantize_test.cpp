// Round-to-nearest quantizers and the host float conversions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "sailfish/quantize.h"
#include "sailfish/reference.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

TEST(FloatConversion, KnownBitPatterns) {
  EXPECT_EQ(float_to_bits(1.0f, DType::kF16), 0x3c00);
  EXPECT_EQ(float_to_bits(-2.0f, DType::kF16), 0xc000);
  EXPECT_EQ(float_to_bits(65504.0f, DType::kF16), 0x7bff);
  EXPECT_EQ(float_to_bits(1e6f, DType::kF16), 0x7c00);                  // overflow to inf
  EXPECT_EQ(float_to_bits(5.960464477539063e-08f, DType::kF16), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_bits(1.0f, DType::kBF16), 0x3f80);
  EXPECT_EQ(float_to_bits(1.00390625f, DType::kBF16), 0x3f80);  // tie: round to even
  EXPECT_EQ(float_to_bits(1.01171875f, DType::kBF16), 0x3f82);  // tie: round to even (up)
  EXPECT_EQ(bits_to_float(0x3555, DType::kF16), 0.333251953125f);
}

TEST(FloatConversion, RoundTripOfEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float f = bits_to_float(bits, DType::kF16);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bits(f, DType::kF16), bits) << std::hex << h;
    const float b = bits_to_float(bits, DType::kBF16);
    if (std::isnan(b)) continue;
    ASSERT_EQ(float_to_bits(b, DType::kBF16), bits) << std::hex << h;
  }
}

class QuantizeRtn : public ::testing::TestWithParam<std::tuple<int, int, QuantScheme>> {};

// Each dequantized weight is within half a quantization step of the original (plus the scale's
// own rounding), codes use the full range, and the result validates.
TEST_P(QuantizeRtn, ErrorWithinHalfAStep) {
  const auto [bits, group_size, scheme] = GetParam();
  std::mt19937_64 rng(testing::test_seed() + 21);
  const int64_t n = 48, k = 320;
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> weights(static_cast<size_t>(n * k));
  for (auto& v : weights) v = normal(rng);
  QuantizeOptions options;
  options.bits = bits;
  options.group_size = group_size;
  options.scheme = scheme;
  options.scale_dtype = DType::kF32;
  QuantizedWeight w;
  ASSERT_TRUE(quantize_rtn(weights.data(), n, k, options, &w).ok());
  ASSERT_TRUE(validate(w).ok());
  EXPECT_EQ(w.zero_kind,
            scheme == QuantScheme::kSymmetric ? ZeroPointKind::kNone : ZeroPointKind::kInteger);
  int max_code_seen = 0;
  for (int64_t nn = 0; nn < n; ++nn) {
    for (int64_t kk = 0; kk < k; ++kk) {
      const double s = std::abs(w.scales[static_cast<size_t>(w.group_of(kk) * n + nn)]);
      const double err = std::abs(w.dequantized(nn, kk) - weights[static_cast<size_t>(nn * k + kk)]);
      ASSERT_LE(err, 0.5 * s * (1 + 1e-5) + 1e-7) << nn << "," << kk;
      max_code_seen = std::max<int>(max_code_seen, w.codes[static_cast<size_t>(nn * k + kk)]);
    }
  }
  EXPECT_GE(max_code_seen, (1 << bits) - 2);

  // The scale and zero point of every group are quantize.h's formulas (the range taken to include
  // 0, as the quantizer does), not merely some scale coarse enough to pass the bound above: a scale
  // 7% too large still keeps every error within half of its own step.
  const int max_code = (1 << bits) - 1;
  const int64_t gs = group_size == kChannelwise ? k : group_size;
  for (int64_t nn = 0; nn < n; ++nn) {
    for (int64_t g = 0; g < w.num_groups(); ++g) {
      float lo = 0.0f, hi = 0.0f;
      for (int64_t kk = g * gs; kk < std::min(k, (g + 1) * gs); ++kk) {
        lo = std::min(lo, weights[static_cast<size_t>(nn * k + kk)]);
        hi = std::max(hi, weights[static_cast<size_t>(nn * k + kk)]);
      }
      const double expected = scheme == QuantScheme::kSymmetric
                                  ? std::max(-lo, hi) / (max_code / 2.0)
                                  : (double(hi) - double(lo)) / max_code;
      const float s = w.scales[static_cast<size_t>(g * n + nn)];
      ASSERT_NEAR(s, expected, 1e-6 * expected) << "row " << nn << ", group " << g;
      if (scheme == QuantScheme::kAsymmetric) {
        const double zp = std::min<double>(std::max(std::round(-lo / s), 0.0f), max_code);
        ASSERT_EQ(w.zero_point(g, nn), zp) << "row " << nn << ", group " << g;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, QuantizeRtn,
    ::testing::Combine(::testing::Values(4, 8), ::testing::Values(16, 32, 64, 128, 256, -1),
                       ::testing::Values(QuantScheme::kSymmetric, QuantScheme::kAsymmetric)));

TEST(QuantizeRtn, ScalesExactInRequestedType) {
  std::mt19937_64 rng(testing::test_seed() + 22);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> weights(64 * 128);
  for (auto& v : weights) v = u(rng);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    QuantizeOptions options;
    options.scale_dtype = dtype;
    QuantizedWeight w;
    ASSERT_TRUE(quantize_rtn(weights.data(), 64, 128, options, &w).ok());
    for (float s : w.scales) EXPECT_EQ(s, round_to_dtype(s, dtype));
  }
}

TEST(QuantizeRtn, AllZeroGroupGetsNonZeroScale) {
  std::vector<float> weights(8 * 64, 0.0f);
  QuantizedWeight w;
  ASSERT_TRUE(quantize_rtn(weights.data(), 8, 64, QuantizeOptions{}, &w).ok());
  for (float s : w.scales) EXPECT_NE(s, 0.0f);
  for (int64_t kk = 0; kk < 64; ++kk) EXPECT_EQ(w.dequantized(0, kk), 0.0);
}

}  // namespace
}  // namespace sailfish
