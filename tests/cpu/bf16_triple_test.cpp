// The decode flush's correction split (src/common/bf16_triple.h): three bf16 that add up to the
// fp32 value exactly, since the correction mma must not round a correction that is ~30x the
// group's true sum.
#include "common/bf16_triple.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using sailfish::detail::bits_of;
using sailfish::detail::float_of;
using sailfish::detail::split_into_bf16_triple;

// A bf16 bit pattern as the fp32 it stands for.
double bf16_value(uint32_t bits16) { return float_of(bits16 << 16); }

// hi + mid + lo in double (exact: three floats of at most 8 significant bits each, within 2^48 of
// each other's scale), checked against x, with the fragment layout the mma reads.
void expect_exact_split(float x) {
  const auto t = split_into_bf16_triple(x);
  const double hi = bf16_value(t.b0 & 0xffffu);
  const double mid = bf16_value(t.b0 >> 16);
  const double lo = bf16_value(t.b1 & 0xffffu);
  EXPECT_EQ(t.b1 >> 16, 0u) << "the fourth slot must add nothing, x = " << x;
  EXPECT_EQ(hi + mid + lo, static_cast<double>(x)) << "x = " << x << " bits 0x" << std::hex
                                                   << bits_of(x);
}

TEST(Bf16Triple, SplitsSpecialValuesExactly) {
  for (float x : {0.0f, -0.0f, 1.0f, -1.0f, 1.0f + 0x1p-23f, -(1.0f + 0x1p-23f), 0x1.fffffep127f,
                  -0x1.fffffep127f, 0x1p-100f, 3.14159265f, -136.0f * 1234.567f}) {
    expect_exact_split(x);
  }
}

// The sizes a correction takes: -unit (136 for bf16 int4, 384 for int8; 2304 before decode v55)
// times sums of up to a few hundred activations, any sign, and every low-bit pattern of the
// significand.
TEST(Bf16Triple, SplitsRandomCorrectionsExactly) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<uint32_t> significand(0, (1u << 23) - 1);
  std::uniform_int_distribution<int> exponent(-60, 60);
  for (int i = 0; i < 200000; ++i) {
    const float x = std::ldexp(1.0f + significand(rng) * 0x1p-23f, exponent(rng)) *
                    (i % 2 ? -1.0f : 1.0f);
    expect_exact_split(x);
    if (HasFailure()) return;
  }
}

// Three pieces are needed: where x's significant bits span more than 16 places, two truncated
// pieces leave the lowest out, so the third must carry them.
TEST(Bf16Triple, TheThirdPieceCarriesTheLowBits) {
  const float x = 1.0f + 0x1p-8f + 0x1p-23f;  // hi 1, mid 2^-8, lo 2^-23
  const auto t = split_into_bf16_triple(x);
  EXPECT_EQ(bf16_value(t.b0 & 0xffffu), 1.0);
  EXPECT_EQ(bf16_value(t.b0 >> 16), 0x1p-8);
  EXPECT_EQ(bf16_value(t.b1 & 0xffffu), 0x1p-23);
}

}  // namespace
