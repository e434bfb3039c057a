// The decode tier's spread padding (Options::decode_spread; src/decode/launch.cu,
// spread_over_sms): shared memory padded so that an SM holds no more of the warp-split kernel's
// CTAs than the grid's even share. The padding changes where CTAs may run, never what they
// compute: the padded launch must match the float64 reference and the same plan unpadded bit for
// bit, and the padded plan must hold an SM to the share on this device. Where the plan spreads,
// two token tiles also take two clustered splits over the reduce kernel.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "decode/config.h"
#include "decode_test_helpers.h"
#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::GemmCase;
using testing::decode_options;
using testing::device_has_clusters;

// Every format, odd and aligned shapes, 1-4 token tiles, the plan's split depth and a forced
// clustered one (the push form's receive area sits past the warps' regions, before the padding),
// and the opt-in Stream-K grid.
TEST(DecodeSpread, PaddedLaunchBitwiseEqualToUnpadded) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 301);
  const int64_t shapes[][2] = {{200, 1000}, {1024, 4096}, {4096, 1024}};
  int padded = 0;
  for (int format_index = 0; format_index < testing::kWeightFormatCount; ++format_index) {
    const testing::WeightFormat& f = testing::kWeightFormats[format_index];
    const DType dtype = testing::format_test_dtype(format_index);
    for (const auto& shape : shapes) {
      const QuantizedWeight w = testing::random_weight(
          rng, testing::format_spec(f, shape[0], shape[1], 128, false, dtype));
      for (int64_t m : {int64_t(1), int64_t(9), int64_t(16), int64_t(24), int64_t(32)}) {
        // Each variant unpadded and padded, all on the same inputs: one host reference a (shape,
        // M).
        const GemmCase base = testing::gemm_case(w, dtype, m, m % 2 == 1, decode_options());
        std::vector<int> variants_run;
        std::vector<Options> options;
        for (int variant = 0; variant < 3; ++variant) {
          Options unpadded = base.options;
          if (variant == 1) {
            if (!device_has_clusters()) continue;
            unpadded.decode_splits = 2;
          }
          if (variant == 2) {
            if (!device_has_clusters() || f.bits != 4 || m > 16) continue;
            unpadded.decode_stream_k = true;
          }
          unpadded.decode_spread = false;
          Options padded_options = unpadded;
          padded_options.decode_spread = true;
          variants_run.push_back(variant);
          options.insert(options.end(), {unpadded, padded_options});
        }
        const auto results = testing::run_and_check_variants(base, options, rng());
        for (size_t i = 0; i < variants_run.size(); ++i) {
          const auto& a = results[2 * i];
          const auto& b = results[2 * i + 1];
          const std::string where = std::string(f.name) + " n=" + std::to_string(shape[0]) +
                                    " k=" + std::to_string(shape[1]) + " m=" + std::to_string(m) +
                                    " variant=" + std::to_string(variants_run[i]);
          ASSERT_TRUE(a.ok) << where << ": " << a.message;
          ASSERT_TRUE(b.ok) << where << ": " << b.message;
          EXPECT_EQ(a.spread_ctas, 0) << where;
          EXPECT_EQ(a.stream_k_strips, b.stream_k_strips) << where;
          // The padding is the plan's last step; besides it, only two token tiles may take
          // clustered pairs spread, where the plan unspread ends on the reduce kernel or on the
          // deep pipeline, at the depth the warps' length gives (config.h,
          // pair_warps_are_short).
          if (a.splits != b.splits || a.decode_epilogue != b.decode_epilogue ||
              a.warp_stages != b.warp_stages) {
            EXPECT_TRUE(a.decode_epilogue == testing::kEpiloguePartials ||
                        a.warp_stages == decode::warp_split_deep_stages(2))
                << where;
            EXPECT_EQ(b.splits, 2) << where;
            EXPECT_EQ(b.decode_epilogue, testing::kEpilogueCluster) << where;
            EXPECT_GT(b.spread_ctas, 0) << where;
            continue;
          }
          EXPECT_EQ(a.cluster_push, b.cluster_push) << where;
          EXPECT_EQ(a.output_bits, b.output_bits) << where;
          padded += b.spread_ctas > 0 ? 1 : 0;
        }
      }
    }
  }
  EXPECT_GT(padded, 0) << "no case was padded";
}

// The padded plan against the device's own limits: with spread_ctas CTAs an SM, one more no
// longer fits in its shared memory, and the share is ceil(grid / SMs). l3-70b.down at M = 9 with
// two clustered splits of five stages (256 CTAs, 69 KB, three an SM unpadded: v46 in
// docs/perf/decode.md), l3-8b.o at M = 1 (128 CTAs), and a grid that already fills its SMs
// (l3-70b.gate_up at M = 1, 896 CTAs), which is left alone. Where the plan pads, shared memory
// and not the registers bounds the CTAs an SM holds, so the shared-memory count below is the
// occupancy there (on l3-70b.gate_up the registers hold the one-tile kernel to four CTAs an SM:
// 126 a thread).
TEST(DecodeSpread, PlanHoldsAnSmToTheGridsShare) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters()) GTEST_SKIP() << "the cases plan clustered splits (sm_90)";
  int device = 0, sms = 0, smem_per_sm = 0, reserved = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                   device),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device),
            cudaSuccess);
  struct Case {
    int64_t n, k, m, splits, stages;
  };
  const Case cases[] = {{8192, 28672, 9, 2, 5}, {4096, 4096, 1, 0, 0}, {57344, 8192, 1, 0, 0}};
  for (const Case& c : cases) {
    Problem problem;
    problem.m = c.m;
    ASSERT_TRUE(PackedGeometry::make(c.n, c.k, 4, 128, &problem.geometry).ok());
    Options options = decode_options();
    if (c.splits > 0) options.decode_splits = c.splits;
    if (c.stages > 0) options.decode_warp_stages = c.stages;
    Plan base, spread;
    options.decode_spread = false;
    ASSERT_TRUE(sailfish::plan(problem, -1, options, &base).ok());
    options.decode_spread = true;
    ASSERT_TRUE(sailfish::plan(problem, -1, options, &spread).ok());
    const DecodePlan& d = spread.decode;
    const int64_t grid = (c.n / 64) * d.m_groups * d.splits;
    const int64_t share = (grid + sms - 1) / sms;
    const int64_t fit_before = smem_per_sm / (base.decode.shared_bytes + reserved);
    const std::string where = "n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                              " m=" + std::to_string(c.m) + " grid=" + std::to_string(grid) +
                              " shared " + std::to_string(base.decode.shared_bytes) + " -> " +
                              std::to_string(d.shared_bytes);
    EXPECT_EQ(base.decode.spread_ctas, 0) << where;
    EXPECT_EQ(d.splits, base.decode.splits) << where;
    // DecodePlan::resident_ctas is the occupancy query's count: at most what the shared memory
    // alone allows (the registers or the kernel's static shared memory can hold it lower).
    EXPECT_GE(base.decode.resident_ctas, 1) << where;
    EXPECT_LE(base.decode.resident_ctas, fit_before) << where;
    if (fit_before <= share) {
      EXPECT_EQ(d.spread_ctas, 0) << where << ": nothing to pad";
      EXPECT_EQ(d.shared_bytes, base.decode.shared_bytes) << where;
      EXPECT_EQ(d.resident_ctas, base.decode.resident_ctas) << where;
      continue;
    }
    ASSERT_EQ(d.spread_ctas, share) << where;
    EXPECT_EQ(d.resident_ctas, share) << where;
    EXPECT_GT(d.shared_bytes, base.decode.shared_bytes) << where;
    EXPECT_LE(int64_t(share) * (d.shared_bytes + reserved), smem_per_sm) << where;
    EXPECT_GT(int64_t(share + 1) * (d.shared_bytes + reserved), smem_per_sm) << where;
  }
}

// The default plan at two token tiles: where the plan unspread ends on the reduce kernel, two
// clustered splits, spread, if their grid's share is two or more CTAs an SM and even
// (config.h, spread_pays). On the H200 l3-70b.o and l3-70b.down at M = 9 and 12 (three splits
// and the reduce kernel unspread) take them: 0.82x and 0.96x (v46 in docs/perf/decode.md).
// Spread: an SM holds at most the share, two of the pair's 256 CTAs, by the padding or (five
// stages from M = 12, v47) by the CTAs' own shared memory.
TEST(DecodeSpread, TwoTokenTilesTakeSpreadPairsOverTheReduceKernel) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters()) GTEST_SKIP() << "clustered splits need sm_90";
  int device = 0, smem_per_sm = 0, reserved = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                   device),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device),
            cudaSuccess);
  const int64_t shapes[][2] = {{8192, 8192}, {8192, 28672}};  // l3-70b.o, l3-70b.down
  int paired = 0;
  for (const auto& nk : shapes) {
    for (int64_t m : {int64_t(9), int64_t(12)}) {
      Problem problem;
      problem.m = m;
      ASSERT_TRUE(PackedGeometry::make(nk[0], nk[1], 4, 128, &problem.geometry).ok());
      Options off = decode_options();
      off.decode_spread = false;
      Plan unspread, plan;
      ASSERT_TRUE(sailfish::plan(problem, -1, off, &unspread).ok());
      ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
      const std::string where = "n=" + std::to_string(nk[0]) + " m=" + std::to_string(m);
      ASSERT_EQ(plan.decode.token_tiles, 2) << where;
      if (unspread.decode.epilogue != testing::kEpiloguePartials) {
        EXPECT_EQ(plan.decode.splits, unspread.decode.splits) << where;
        continue;
      }
      if (plan.decode.epilogue == testing::kEpilogueCluster) {
        EXPECT_EQ(plan.decode.splits, 2) << where;
        EXPECT_GT(3 * int64_t(plan.decode.shared_bytes + reserved), smem_per_sm)
            << where << ": clustered pairs left unspread (three fit an SM)";
        EXPECT_TRUE(plan.decode.spread_ctas == 2 || plan.decode.spread_ctas == 0) << where;
        ++paired;
      }
    }
  }
  if (const int sms = testing::device_sm_count(); sms != 132) {
    GTEST_SKIP() << "the paired count expects 132 SMs; this device has " << sms;
  }
  EXPECT_EQ(paired, 4) << "the H200's measured cases";
}

// The spread pair's depth at two token tiles follows a warp's length (config.h,
// pair_warps_are_short; v47 in docs/perf/decode.md): l3-70b.o (16 blocks a warp) runs four
// stages, at M = 9-12 over the reduce kernel and at M = 13-16 over the deep plan (0.957x);
// l3-70b.down (56 blocks) runs the deep depth, at M = 9-12 over the four-stage pair
// (0.969-0.982x) and at M = 16 as before. The measured plans, on the H200's 132 SMs.
TEST(DecodeSpread, TwoTokenTilePairsTakeTheirDepthFromTheWarpsLength) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters() || testing::device_sm_count() != 132) {
    GTEST_SKIP() << "the measured plans are for the H200's 132 SMs (sm_90)";
  }
  struct Case {
    int64_t n, k, m;
    int stages;
  };
  const Case cases[] = {{8192, 8192, 9, decode::kStages},
                        {8192, 8192, 12, decode::kStages},
                        {8192, 8192, 13, decode::kStages},
                        {8192, 8192, 16, decode::kStages},
                        {8192, 28672, 9, decode::warp_split_deep_stages(2)},
                        {8192, 28672, 12, decode::warp_split_deep_stages(2)},
                        {8192, 28672, 16, decode::warp_split_deep_stages(2)}};
  for (const Case& c : cases) {
    Problem problem;
    problem.m = c.m;
    ASSERT_TRUE(PackedGeometry::make(c.n, c.k, 4, 128, &problem.geometry).ok());
    Plan plan;
    ASSERT_TRUE(sailfish::plan(problem, -1, decode_options(), &plan).ok());
    const std::string where = "n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                              " m=" + std::to_string(c.m);
    EXPECT_EQ(plan.decode.token_tiles, 2) << where;
    EXPECT_EQ(plan.decode.splits, 2) << where;
    EXPECT_EQ(plan.decode.epilogue, testing::kEpilogueCluster) << where;
    EXPECT_EQ(plan.decode.warp_stages, c.stages) << where;
    // The padding holds an SM to two CTAs where more would fit: four stages at M = 9-16, five at
    // M = 9 (72 KB a CTA with the push area); five stages from M = 12 are that large already.
    if (c.stages == decode::kStages || c.m == 9) {
      EXPECT_EQ(plan.decode.spread_ctas, 2) << where;
    } else {
      EXPECT_EQ(plan.decode.spread_ctas, 0) << where;
    }
    // Unspread, the rules before v46: no pairs at four stages over the deep plan.
    Options off = decode_options();
    off.decode_spread = false;
    Plan unspread;
    ASSERT_TRUE(sailfish::plan(problem, -1, off, &unspread).ok());
    EXPECT_EQ(unspread.decode.spread_ctas, 0) << where;
    if (c.m >= 13) {
      EXPECT_EQ(unspread.decode.warp_stages, decode::warp_split_deep_stages(2)) << where;
    }
  }
}

// A share of one CTA an SM pads only where each warp streams at least 64 KB (config.h,
// spread_pays; v49 in docs/perf/decode.md). int8 14336 x 4096 (l3-8b.down; two splits of 112 KB
// a warp) at M = 1 and 4 pads its 128 CTAs to one an SM (0.965-0.974x), and at M = 16 takes two
// clustered splits, spread, over four splits and the reduce kernel (0.969x); l3-8b.o (16 KB a
// warp int4, 32 KB int8) keeps the room for the next launch. The padded plans match the float64
// reference. The measured plans, on the H200's 132 SMs.
TEST(DecodeSpread, AShareOfOneSpreadsOnlyLongWarps) {
  SF_SKIP_WITHOUT_GPU();
  if (!device_has_clusters() || testing::device_sm_count() != 132) {
    GTEST_SKIP() << "the measured plans are for the H200's 132 SMs (sm_90)";
  }
  struct Case {
    int64_t n, k, m;
    int bits;
    bool spread;
  };
  const Case cases[] = {{4096, 14336, 1, 8, true},  {4096, 14336, 4, 8, true},
                        {4096, 14336, 16, 8, true}, {4096, 4096, 1, 8, false},
                        {4096, 4096, 1, 4, false},  {4096, 4096, 16, 4, false}};
  std::mt19937_64 rng(testing::test_seed() + 307);
  for (const Case& c : cases) {
    const std::string where = "n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                              " m=" + std::to_string(c.m) + " bits=" + std::to_string(c.bits);
    Problem problem;
    problem.m = c.m;
    ASSERT_TRUE(PackedGeometry::make(c.n, c.k, c.bits, 128, &problem.geometry).ok());
    // Four warps a CTA: at one token tile the rule would take 14336 x 4096 to the wide instance
    // (DecodeWideWarps), whose warps stream half as long and keep the room instead.
    Options options = decode_options();
    options.decode_wide_warps = false;
    Plan plan;
    ASSERT_TRUE(sailfish::plan(problem, -1, options, &plan).ok()) << where;
    EXPECT_EQ(plan.decode.splits, 2) << where;
    EXPECT_EQ(plan.decode.epilogue, testing::kEpilogueCluster) << where;
    EXPECT_EQ(plan.decode.spread_ctas, c.spread ? 1 : 0) << where;
    const int64_t warp_bytes = decode::warp_split_warp_stream_bytes(
        problem.geometry.k_blocks, plan.decode.splits, problem.geometry.block_bytes());
    EXPECT_EQ(warp_bytes >= decode::kShareOneLongWarpBytes, c.spread) << where;
    if (!c.spread) continue;
    const testing::WeightFormat& f = testing::kWeightFormats[c.bits == 8 ? 3 : 0];
    const QuantizedWeight w = testing::random_weight(
        rng, testing::format_spec(f, c.n, c.k, 128, false, DType::kBF16));
    const auto result = testing::run_and_check(
        testing::gemm_case(w, DType::kBF16, c.m, c.m % 2 == 1, options), rng());
    ASSERT_TRUE(result.ok) << where << ": " << result.message;
    EXPECT_EQ(result.spread_ctas, 1) << where;
  }
}

}  // namespace
}  // namespace sailfish
