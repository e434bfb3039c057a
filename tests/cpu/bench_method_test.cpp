// The bench's method in pure host arithmetic (docs/BENCH.md): the roofline's bytes and flops
// (bench/roofline.h), the median (bench/stats.h), and the cold-weight rotation of sailfish_bench
// and sailfish_moe_bench (bench/rotation.h, bench/moe/moe_rotation.h): between two uses of a
// weight copy, within a replay and across replays, the calls read more than 3x the L2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "eager_summary.h"
#include "moe/moe_layers.h"
#include "moe/moe_rotation.h"
#include "roofline.h"
#include "rotation.h"
#include "sailfish/packed_format.h"
#include "shapes.h"
#include "stats.h"

namespace sailfish::bench {
namespace {

constexpr int64_t kH200L2 = 62914560;  // cudaDeviceProp::l2CacheSize of the H200 (60 MiB)
constexpr int64_t kH100L2 = 52428800;  // and of the H100 (50 MiB)
constexpr double kCold = 3.0;          // --cold-factor's default
constexpr int kLaunches = 20;          // --graph-launches' and --launches' default
constexpr int kMaxCopies = 4096;       // shape_runner.cpp's cap

PackedGeometry geometry(int64_t n, int64_t k, int bits, int group) {
  PackedGeometry g;
  EXPECT_TRUE(PackedGeometry::make(n, k, bits, group, &g).ok()) << n << "x" << k;
  return g;
}

// --- roofline ------------------------------------------------------------------------------

TEST(BenchRoofline, Int4Group128IsTheDocumentedFormula) {
  // docs/perf/README.md: bytes = K N / 2 + (K / 128) N 2 + 2 M (K + N), flops = 2 M N K.
  for (const Shape& s : default_shapes()) {
    for (const int64_t m : {int64_t(1), int64_t(16), int64_t(8192)}) {
      const RowCost c = row_cost(geometry(s.n, s.k, 4, 128), false, false, false, m);
      const double k = double(s.k), n = double(s.n), md = double(m);
      EXPECT_DOUBLE_EQ(c.weight_bytes, k * n / 2 + (k / 128) * n * 2) << s.name;
      EXPECT_DOUBLE_EQ(c.bytes, k * n / 2 + (k / 128) * n * 2 + 2 * md * (k + n)) << s.name;
      EXPECT_DOUBLE_EQ(c.flops, 2 * md * n * k) << s.name;
    }
  }
}

TEST(BenchRoofline, OtherFormatsBiasAndActOrder) {
  const int64_t k = 4096, n = 6144, m = 16;
  const double kd = k, nd = n, act = 2.0 * m * (kd + nd);
  // int8: a byte a code.
  EXPECT_DOUBLE_EQ(row_cost(geometry(n, k, 8, 128), false, false, false, m).bytes,
                   kd * nd + (kd / 128) * nd * 2 + act);
  // Other groups, and channelwise: one scale row.
  for (const int group : {16, 32, 64, 256}) {
    EXPECT_DOUBLE_EQ(row_cost(geometry(n, k, 4, group), false, false, false, m).weight_bytes,
                     kd * nd / 2 + (kd / group) * nd * 2)
        << group;
  }
  EXPECT_DOUBLE_EQ(row_cost(geometry(n, k, 4, kChannelwise), false, false, false, m).weight_bytes,
                   kd * nd / 2 + nd * 2);
  // Zero points: the scales, the zero shifts and the folds, three planes of the same size.
  EXPECT_DOUBLE_EQ(row_cost(geometry(n, k, 4, 128), true, false, false, m).weight_bytes,
                   kd * nd / 2 + 3 * (kd / 128) * nd * 2);
  // Bias: 2 N; act-order: the int32 permutation, 4 K.
  const double base = row_cost(geometry(n, k, 4, 128), false, false, false, m).bytes;
  EXPECT_DOUBLE_EQ(row_cost(geometry(n, k, 4, 128), false, false, true, m).bytes, base + 2 * nd);
  EXPECT_DOUBLE_EQ(row_cost(geometry(n, k, 4, 128), false, true, false, m).bytes, base + 4 * kd);
}

TEST(BenchRoofline, TheSlowerRoofWins) {
  RowCost c;
  c.bytes = 4.4e6;  // 1 us at 4.4 TB/s
  c.flops = 790e6;  // 1 us at 790 TFLOP/s
  EXPECT_DOUBLE_EQ(roofline_seconds(c, 4.4, 790.0), 1e-6);
  c.flops = 2 * 790e6;
  EXPECT_DOUBLE_EQ(roofline_seconds(c, 4.4, 790.0), 2e-6);
  c.bytes = 3 * 4.4e6;
  EXPECT_DOUBLE_EQ(roofline_seconds(c, 4.4, 790.0), 3e-6);
}

// --- median --------------------------------------------------------------------------------

TEST(BenchStats, Median) {
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(median({3.0}), 3.0);
  EXPECT_EQ(median({5.0, 1.0, 4.0, 2.0, 3.0, 7.0, 6.0}), 4.0);  // 7 replays, unsorted
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);                 // even: the middle two's mean
}

// --eager's figures (bench/eager_summary.h): per call, the GPU median in microseconds from
// milliseconds, the host median as measured, each taken over its own rounds.
TEST(BenchStats, EagerSummaryTakesEachMedianApart) {
  // Three rounds of 20 calls: GPU 0.200, 0.100, 0.120 ms; host 50, 30, 400 us (a preempted round).
  const EagerTiming t = summarize_eager({50.0, 30.0, 400.0}, {0.200, 0.100, 0.120}, 20);
  EXPECT_EQ(t.launches, 20);
  EXPECT_EQ(t.rounds, 3);
  EXPECT_DOUBLE_EQ(t.us_per_call, 0.120 * 1e3 / 20);  // 6 us: the median round, not the mean
  EXPECT_DOUBLE_EQ(t.host_us_per_call, 50.0 / 20);    // 2.5 us, the slow round left out
  // No calls: nothing divided by zero.
  const EagerTiming none = summarize_eager({1.0}, {1.0}, 0);
  EXPECT_EQ(none.us_per_call, 0.0);
  EXPECT_EQ(none.host_us_per_call, 0.0);
}

// --- the rotation of sailfish_bench ---------------------------------------------------------

TEST(BenchRotation, MinReuseCopies) {
  EXPECT_EQ(min_reuse_copies(20, 1), 1);
  EXPECT_EQ(min_reuse_copies(20, 4), 4);   // 20 = 5 rotations
  EXPECT_EQ(min_reuse_copies(22, 22), 22);
  EXPECT_EQ(min_reuse_copies(20, 6), 2);   // copy 0 at call 18, call 19 on copy 1, then copy 0
  EXPECT_EQ(min_reuse_copies(20, 15), 5);  // copies 0-4 at calls 15-19 and again at 0-4
  EXPECT_EQ(min_reuse_copies(24, 6), 6);
}

TEST(BenchRotation, WholeRotations) {
  EXPECT_EQ(rotation_launches(20, 1), 20);
  EXPECT_EQ(rotation_launches(20, 4), 20);
  EXPECT_EQ(rotation_launches(20, 6), 24);
  EXPECT_EQ(rotation_launches(20, 7), 21);
  EXPECT_EQ(rotation_launches(20, 15), 30);
  EXPECT_EQ(rotation_launches(20, 22), 22);
  EXPECT_EQ(rotation_launches(1, 3), 3);
  for (int copies = 1; copies <= 64; ++copies) {
    for (const int requested : {1, 20, 40, 63}) {
      const int launches = rotation_launches(requested, copies);
      EXPECT_GE(launches, requested);
      EXPECT_EQ(launches % copies, 0);
      EXPECT_LT(launches - std::max(requested, copies), copies);
      EXPECT_EQ(min_reuse_copies(launches, copies), copies);
    }
  }
}

// Before the fix a graph held max(--graph-launches, C) calls: with C not dividing 20, the next
// replay started over at copy 0 right after the partial last rotation, and the first calls of
// every replay found their copy a few copies back. The default set's figures at H200's L2:
TEST(BenchRotation, TheOldGraphSizeFellShortAcrossReplays) {
  struct Case {
    const char* shape;
    int copies, reuse;  // C, and the fewest copies between two uses with 20 calls
  };
  for (const Case& c : {Case{"l3-8b.qkv", 15, 5}, Case{"l3-8b.down", 7, 6},
                        Case{"l3-70b.o", 6, 2}}) {
    const std::vector<Shape> shapes = default_shapes();
    const Shape s = *std::find_if(shapes.begin(), shapes.end(),
                                  [&](const Shape& x) { return x.name == c.shape; });
    const double bytes = row_cost(geometry(s.n, s.k, 4, 128), false, false, false, 1).weight_bytes;
    const int copies = cold_copies(size_t(bytes), kH200L2, kCold, kMaxCopies);
    EXPECT_EQ(copies, c.copies) << c.shape;
    const int old_launches = std::max(kLaunches, copies);
    EXPECT_EQ(min_reuse_copies(old_launches, copies), c.reuse) << c.shape;
    EXPECT_LE(c.reuse * bytes, kCold * kH200L2) << c.shape;  // the promise broken
  }
}

TEST(BenchRotation, EveryDefaultRowIsColdWithinAndAcrossReplays) {
  for (const int64_t l2 : {kH200L2, kH100L2}) {
    for (const Shape& s : default_shapes()) {
      for (const int bits : {4, 8}) {
        for (const int group : {32, 128, kChannelwise}) {
          for (const bool zero : {false, true}) {
            const double bytes =
                row_cost(geometry(s.n, s.k, bits, group), zero, false, false, 1).weight_bytes;
            const int copies = cold_copies(size_t(bytes), l2, kCold, kMaxCopies);
            const int launches = rotation_launches(kLaunches, copies);
            EXPECT_GE(launches, kLaunches);
            EXPECT_GT(min_reuse_copies(launches, copies) * bytes, kCold * double(l2))
                << s.name << " int" << bits << " g" << group << (zero ? " zp" : "");
          }
        }
      }
      // The cuBLAS baseline's dense bf16 copies.
      const size_t dense = size_t(s.n * s.k) * 2;
      const int copies = cold_copies(dense, l2, kCold, kMaxCopies);
      EXPECT_GT(min_reuse_copies(rotation_launches(kLaunches, copies), copies) * double(dense),
                kCold * double(l2))
          << s.name << " cuBLAS";
    }
  }
}

// --- the rotation of sailfish_moe_bench -------------------------------------------------------

struct MoeCase {
  MoeLayer layer;
  bool gate_up;
  int bits;
};

std::vector<MoeCase> moe_cases() {
  std::vector<MoeCase> cases;
  for (const MoeLayer& layer : kMoeLayers) {
    for (const bool gate_up : {true, false}) {
      for (const int bits : {4, 8}) cases.push_back({layer, gate_up, bits});
    }
  }
  return cases;
}

PackedGeometry moe_geometry(const MoeCase& c) {
  return c.gate_up ? geometry(2 * c.layer.intermediate, c.layer.hidden, c.bits, 128)
                   : geometry(c.layer.hidden, c.layer.intermediate, c.bits, 128);
}

std::string moe_name(const MoeCase& c) {
  return std::string(c.layer.name) + (c.gate_up ? " gate_up" : " down") + " int" +
         std::to_string(c.bits);
}

// Before the fix the copies were counted on the whole expert set (min(8, 180 MiB / set + 1)),
// while a call reads only the touched experts: at one token (top_k experts touched) Qwen3's 128
// expert sets got one or two copies, and the same 8 experts, 13 MB, were read by every call.
TEST(MoeBenchRotation, TheOldCountLeftSmallTokenCountsWarm) {
  const MoeCase qwen3_gate_up{kMoeLayers[0], true, 4}, qwen3_down{kMoeLayers[0], false, 4};
  ASSERT_EQ(std::string(qwen3_gate_up.layer.name), "qwen3-30b-a3b");
  for (const MoeCase& c : {qwen3_gate_up, qwen3_down}) {
    const size_t expert = moe_expert_bytes(moe_geometry(c));
    const size_t set = expert * size_t(c.layer.experts);
    const int old_copies =
        static_cast<int>(std::min<size_t>(8, (size_t(180) << 20) / std::max<size_t>(set, 1) + 1));
    const size_t touched = expert * size_t(c.layer.top_k);  // one token
    const double rotated = double(old_copies) * double(touched);
    EXPECT_LT(rotated, double(kH200L2)) << moe_name(c) << ": " << old_copies << " copies";
  }
}

TEST(MoeBenchRotation, TouchedExpertsAreColdWithinAndAcrossReplays) {
  const size_t budget = size_t(100) << 30;
  for (const int64_t l2 : {kH200L2, kH100L2}) {
    for (const MoeCase& c : moe_cases()) {
      const size_t expert = moe_expert_bytes(moe_geometry(c));
      const size_t set = expert * size_t(c.layer.experts);
      // From one token's experts to every expert.
      for (int touched = c.layer.top_k; touched <= c.layer.experts; touched *= 2) {
        const size_t read = expert * size_t(touched);
        const MoeRotation r = moe_rotation(read, set, l2, kCold, budget, kLaunches);
        EXPECT_EQ(r.copies, r.wanted) << moe_name(c);
        EXPECT_GE(r.launches, kLaunches);
        EXPECT_GT(min_reuse_copies(r.launches, r.copies) * double(read), kCold * double(l2))
            << moe_name(c) << " touched " << touched << ": " << r.copies << " copies";
        // Within the budget.
        EXPECT_LE(double(r.copies) * double(set), double(budget)) << moe_name(c);
      }
      // The cuBLAS baseline: bf16 weights of the touched experts only.
      const int64_t n = moe_geometry(c).n, k = moe_geometry(c).k;
      const size_t dense = size_t(n * k) * 2 * size_t(c.layer.top_k);
      const MoeRotation r = moe_rotation(dense, dense, l2, kCold, budget, kLaunches);
      EXPECT_GT(min_reuse_copies(r.launches, r.copies) * double(dense), kCold * double(l2))
          << moe_name(c) << " cuBLAS";
    }
  }
}

TEST(MoeBenchRotation, MemoryCapsTheCopies) {
  const MoeRotation r = moe_rotation(size_t(10) << 20, size_t(1) << 30, kH200L2, kCold,
                                     size_t(5) << 30, kLaunches);
  EXPECT_EQ(r.wanted, 19);
  EXPECT_EQ(r.copies, 5);
  EXPECT_EQ(r.launches, 20);
  EXPECT_EQ(moe_rotation(1, size_t(1) << 40, kH200L2, kCold, 0, kLaunches).copies, 1);
}

}  // namespace
}  // namespace sailfish::bench
