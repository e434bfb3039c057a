// The double-precision reference GEMM, against a direct formula on hand-sized examples, and its
// rows spread over threads (common/parallel_rows.h) against the one-thread sum.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <vector>

#include "common/parallel_rows.h"
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

// Every row visited exactly once, in slices that cover [0, rows) without overlap: below the work
// bound (one call), above it, and with fewer rows than threads.
TEST(ParallelRows, EachRowOnce) {
  for (const int64_t rows : {int64_t(1), int64_t(3), int64_t(64), int64_t(1000), int64_t(4097)}) {
    for (const int64_t work : {int64_t(1), detail::kParallelRowsMinWork}) {
      std::vector<std::atomic<int>> visits(static_cast<size_t>(rows));
      std::atomic<int> calls{0};
      detail::parallel_rows(rows, work, [&](int64_t begin, int64_t end) {
        ++calls;
        EXPECT_LT(begin, end);
        for (int64_t r = begin; r < end; ++r) ++visits[static_cast<size_t>(r)];
      });
      for (int64_t r = 0; r < rows; ++r) {
        EXPECT_EQ(visits[static_cast<size_t>(r)].load(), 1) << "rows " << rows << " row " << r;
      }
      if (work == 1) EXPECT_EQ(calls.load(), 1) << "rows " << rows << ": small work was split";
      EXPECT_LE(calls.load(), detail::kParallelRowsMaxThreads);
    }
  }
}

// A layer large enough to take threads (512 x 4096 at 3 tokens: 6.3 M multiply-adds) gives, bit for
// bit, the sums one thread takes in k order over the dequantized weight.
TEST(ReferenceGemm, ThreadedRowsEqualTheSerialSum) {
  std::mt19937_64 rng(testing::test_seed() + 31);
  testing::RandomWeightSpec spec;
  spec.n = 512;
  spec.k = 4096;
  spec.group_size = 64;
  spec.zero_kind = ZeroPointKind::kInteger;
  const QuantizedWeight w = testing::random_weight(rng, spec);
  const int64_t m = 3;
  ASSERT_GE(m * w.k * w.n, detail::kParallelRowsMinWork);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> a(static_cast<size_t>(m * w.k)), bias(static_cast<size_t>(w.n));
  for (double& v : a) v = unit(rng);
  for (double& v : bias) v = unit(rng);
  std::vector<double> y(static_cast<size_t>(m * w.n), -1.0);
  ASSERT_TRUE(reference_gemm(a.data(), m, w, bias.data(), y.data()).ok());
  const std::vector<double> wd = dequantize_reference(w);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t nn = 0; nn < w.n; ++nn) {
      double acc = 0.0;
      for (int64_t kk = 0; kk < w.k; ++kk) {
        acc += a[static_cast<size_t>(i * w.k + kk)] * wd[static_cast<size_t>(nn * w.k + kk)];
      }
      ASSERT_EQ(y[static_cast<size_t>(i * w.n + nn)], acc + bias[static_cast<size_t>(nn)])
          << "row " << i << " column " << nn;
    }
  }
}

}  // namespace
}  // namespace sailfish
