// The double-precision reference GEMM, against a direct formula on hand-sized examples.
#include <gtest/gtest.h>

#include "sailfish/reference.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

TEST(ReferenceGemm, HandComputedExampleWithZeroPointsAndBias) {
  QuantizedWeight w;
  w.n = 2;
  w.k = 4;
  w.bits = 4;
  w.group_size = 16;  // one group covers all of k = 4
  w.codes = {0, 8, 15, 3,   // row 0
             9, 9, 9, 9};   // row 1
  w.scales = {0.5f, -2.0f};
  w.zero_kind = ZeroPointKind::kInteger;
  w.zero_codes = {8, 1};
  // W row 0 = {-4, 0, 3.5, -2.5}; row 1 = (9 - 1) * -2 = -16 each.
  const double a[2 * 4] = {1, 2, 3, 4, -1, 0, 0.5, 1};
  const double bias[2] = {0.25, -1};
  double y[4];
  ASSERT_TRUE(reference_gemm(a, 2, w, bias, y).ok());
  EXPECT_DOUBLE_EQ(y[0], -4 + 0 + 10.5 - 10 + 0.25);
  EXPECT_DOUBLE_EQ(y[1], -16 * 10 - 1);
  EXPECT_DOUBLE_EQ(y[2], 4 + 0 + 1.75 - 2.5 + 0.25);
  EXPECT_DOUBLE_EQ(y[3], -16 * 0.5 - 1);
}

TEST(ReferenceGemm, ActOrderPicksScalePerRow) {
  QuantizedWeight w;
  w.n = 1;
  w.k = 32;
  w.bits = 4;
  w.group_size = 16;
  w.codes.assign(32, 9);  // q - 8 = 1 everywhere
  w.scales = {1.0f, 100.0f};
  w.g_idx.assign(32, 0);
  for (int kk = 0; kk < 32; kk += 2) w.g_idx[static_cast<size_t>(kk)] = 1;  // even rows: group 1
  ASSERT_TRUE(validate(w).ok());
  std::vector<double> a(32, 0.0);
  a[2] = 1.0;  // an even row: group 1
  a[3] = 1.0;  // an odd row: group 0
  double y = 0;
  ASSERT_TRUE(reference_gemm(a.data(), 1, w, nullptr, &y).ok());
  EXPECT_DOUBLE_EQ(y, 101.0);
}

TEST(ReferenceGemm, FloatZeroPoints) {
  QuantizedWeight w;
  w.n = 1;
  w.k = 16;
  w.bits = 4;
  w.group_size = 16;
  w.codes.assign(16, 3);
  w.scales = {2.0f};
  w.zero_kind = ZeroPointKind::kFloat;
  w.zero_values = {1.25f};
  EXPECT_DOUBLE_EQ(w.dequantized(0, 5), (3 - 1.25) * 2.0);
}

}  // namespace
}  // namespace sailfish
