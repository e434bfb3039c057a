// The warp-split instances and the rules that pick one (src/decode/warp_split_instances.h),
// proven on the CPU: stage counts, deep and lighter deep depths, eight warps a CTA.
#include <gtest/gtest.h>

#include <vector>

#include "decode/cluster_epilogue.h"
#include "decode/warp_split_instances.h"

namespace sailfish::decode {
namespace {

// M 1-16 (1-2 token tiles; int8 only at 1) have a deep-pipeline instance (6 stages a warp at
// one tile, 5 at two: v41) for grids of few CTAs an SM; its largest stage (int8 at 8 rows, int4
// at 16, group 16 with zero shifts and folds) fits 4 warps in the 227 KB a CTA may have, and
// int4 M = 1, group 128 still fits the 4 CTAs an SM that registers allow.
TEST(DecodeConfig, DeepStagesForOneAndTwoTokenTiles) {
  EXPECT_EQ(warp_split_deep_stages(1), 6);
  EXPECT_EQ(warp_split_deep_stages(2), 5);
  EXPECT_TRUE(warp_split_has_deep(4, 1));
  EXPECT_TRUE(warp_split_has_deep(4, 2));
  EXPECT_TRUE(warp_split_has_deep(8, 1));
  EXPECT_FALSE(warp_split_has_deep(8, 2));
  for (int bits : {4, 8}) {
    EXPECT_FALSE(warp_split_has_deep(bits, 3));
    EXPECT_FALSE(warp_split_has_deep(bits, 4));
  }
  EXPECT_FALSE(warp_split_stages_vary(1));
  EXPECT_FALSE(warp_split_stages_vary(2));
  EXPECT_EQ(warp_split_max_shared_bytes(4, 2, warp_split_deep_stages(2)), 4 * (128 + 5 * 5632));
  EXPECT_EQ(warp_split_max_shared_bytes(8, 1, warp_split_deep_stages(1)), 4 * (128 + 6 * 6656));
  EXPECT_LE(4 * (kWarps * warp_split_region_bytes(warp_split_stage_bytes(4, 1, 1, false),
                                                  warp_split_deep_stages(1)) +
                 1024),
            228 * 1024);
}

// The built stage counts (3 at 3-4 token tiles, 4, the deep 6 and 5, int8's lighter 5), each
// once: what SAILFISH_DECODE_WARP_STAGES accepts and tune() times; no other value, however wide.
TEST(DecodeConfig, StageCountsAreTheBuiltOnesOnce) {
  std::vector<int> counts;
  for (int slot = 0; slot < kWarpSplitStageCountSlots; ++slot) {
    if (warp_split_stage_count(slot) > 0) counts.push_back(warp_split_stage_count(slot));
  }
  EXPECT_EQ(counts, (std::vector<int>{3, 4, 6, 5}));
  for (const int64_t s : {3, 4, 5, 6}) EXPECT_TRUE(warp_split_builds_stages(s)) << s;
  for (const int64_t s : {int64_t(-4), int64_t(0), int64_t(1), int64_t(2), int64_t(7),
                          int64_t(8), (int64_t(1) << 32) + 4}) {
    EXPECT_FALSE(warp_split_builds_stages(s)) << s;
  }
}

// The wide instance (eight warps a CTA, v50): one token tile, the split grid at four stages, and
// by default only where the four-warp plan's warps stream at least kWideWarpBytes.
TEST(DecodeConfig, WideWarpsOnlyForLongWarpsAtOneTokenTile) {
  constexpr int64_t kInt4Block = 2048, kInt8Block = 4096;
  // l3-70b.down: K = 28672 is 448 k-blocks; two splits, four warps: 56 blocks, 112 KB a warp.
  const int64_t down = warp_split_warp_stream_bytes(448, 2, kInt4Block);
  EXPECT_EQ(down, 112 * 1024);
  EXPECT_EQ(warp_split_warp_stream_bytes(448, 2, kInt4Block, kWarpSplitWideWarps), 56 * 1024);
  // l3-70b.o: K = 8192, two splits: 16 blocks, 32 KB a warp.
  const int64_t o = warp_split_warp_stream_bytes(128, 2, kInt4Block);
  EXPECT_EQ(o, 32 * 1024);
  if (kWideWarpBytes > 0) {
    EXPECT_EQ(wide_warps_pay(1, down), down >= kWideWarpBytes);
    EXPECT_TRUE(wide_warps_pay(1, kWideWarpBytes));
    EXPECT_FALSE(wide_warps_pay(1, kWideWarpBytes - 1));
    EXPECT_FALSE(wide_warps_pay(1, o));
    // int8 l3-8b.down: 224 k-blocks, two splits: 28 blocks of 4 KB.
    EXPECT_EQ(wide_warps_pay(1, warp_split_warp_stream_bytes(224, 2, kInt8Block)),
              112 * 1024 >= kWideWarpBytes);
  }
  // Never beyond one token tile: the two-tile kernel's registers at 256 threads leave one CTA an
  // SM where four warps hold three.
  EXPECT_FALSE(wide_warps_pay(2, int64_t(1) << 30));
  EXPECT_FALSE(wide_warps_pay(4, int64_t(1) << 30));
  EXPECT_TRUE(warp_split_has_wide(1, kStages, false));
  EXPECT_FALSE(warp_split_has_wide(1, warp_split_deep_stages(1), false));
  EXPECT_FALSE(warp_split_has_wide(1, kStages, true));  // Stream-K
  EXPECT_FALSE(warp_split_has_wide(2, kStages, false));
  // The cross-warp sum: 4 fragments a tile over the warps.
  EXPECT_EQ(warp_split_fragments_per_warp(1, 4), 1);
  EXPECT_EQ(warp_split_fragments_per_warp(2, 4), 2);
  EXPECT_EQ(warp_split_fragments_per_warp(4, 4), 4);
  EXPECT_EQ(warp_split_fragments_per_warp(1, 8), 1);  // warps 4-7 hold none
  EXPECT_EQ(warp_split_fragments_per_warp(2, 8), 1);
  // The wide CTA at four stages fits an SM with the largest push area, int8 included.
  EXPECT_LE(warp_split_max_shared_bytes(8, 1, kStages, kWarpSplitWideWarps) +
                cluster_receive_max_bytes(1),
            227 * 1024);
}

// Two clustered splits at two token tiles: four stages where a warp has at most 24 blocks, the
// deep depth above (v47).
TEST(DecodeConfig, PairDepthFollowsTheWarpsLength) {
  EXPECT_EQ(pair_blocks_per_warp(128), 16);  // K = 8192: l3-70b.o, l3-70b.qkv
  EXPECT_EQ(pair_blocks_per_warp(448), 56);  // K = 28672: l3-70b.down
  EXPECT_EQ(pair_blocks_per_warp(462), 58);  // K = 29568: q72.down
  EXPECT_EQ(pair_blocks_per_warp(1), 1);
  EXPECT_EQ(pair_blocks_per_warp(9), 2);     // rounded up
  EXPECT_TRUE(pair_warps_are_short(128));
  EXPECT_TRUE(pair_warps_are_short(192));    // 24 a warp
  EXPECT_FALSE(pair_warps_are_short(193));   // 25
  EXPECT_FALSE(pair_warps_are_short(448));
}

// int8 at one token tile also has a deep instance one stage short of the deepest. A plan takes it
// where it sits better on the SMs (more than one wave < one wave < one wave with room on the
// busiest SM for a CTA of the next launch), else, with bf16 activations, where the deepest would
// keep more than kDeepInFlightBudgetBytes in flight on its busiest SM. The cases are the H200
// rows the rule was drawn from (v42: int8 g128, 132 SMs).
TEST(DecodeConfig, LighterDeepDepthWhereItSitsBetterOrTheDeepestOverfills) {
  EXPECT_EQ(warp_split_lighter_deep_stages(8, 1), 5);
  EXPECT_EQ(warp_split_lighter_deep_stages(4, 1), 0);
  EXPECT_EQ(warp_split_lighter_deep_stages(4, 2), 0);
  EXPECT_EQ(warp_split_lighter_deep_stages(8, 2), 0);
  for (int tiles = 3; tiles <= kWarpSplitMaxTiles; ++tiles) {
    EXPECT_EQ(warp_split_lighter_deep_stages(8, tiles), 0);
  }
  // Residency: ceil(grid / SMs) CTAs on the busiest SM.
  EXPECT_EQ(warp_split_residency(128, 132, 1), 1);  // one each, no room for the next launch
  EXPECT_EQ(warp_split_residency(128, 132, 2), 2);
  EXPECT_EQ(warp_split_residency(256, 132, 1), 0);  // two waves
  EXPECT_EQ(warp_split_residency(256, 132, 2), 1);
  EXPECT_EQ(warp_split_residency(256, 132, 3), 2);
  EXPECT_EQ(warp_split_residency(264, 132, 2), 1);
  EXPECT_EQ(warp_split_residency(265, 132, 2), 0);

  const int int8_m1 = warp_split_stage_bytes(8, 1, 1, false);
  EXPECT_EQ(int8_m1, 4352);
  // l3-70b.down and l3-70b.o at M = 1: 128 strips x 2 splits, two CTAs an SM at either depth;
  // six stages keep two CTAs x four warps x five stages in flight, over the budget.
  EXPECT_EQ(warp_split_in_flight_bytes(256, 132, 2, 6, int8_m1), 2 * 4 * 5 * 4352);
  EXPECT_TRUE(warp_split_lighter_deep_pays(256, 2, 256, 2, 132, 6, int8_m1, true));
  // fp16 has no bytes-in-flight budget: the same plans keep six stages.
  EXPECT_FALSE(warp_split_lighter_deep_pays(256, 2, 256, 2, 132, 6, int8_m1, false));
  // l3-8b.o at M = 1: 64 strips x 2 splits = 128 CTAs, so one an SM, room for the next launch at
  // either depth, 85 KiB in flight: six stays.
  EXPECT_EQ(warp_split_in_flight_bytes(128, 132, 2, 6, int8_m1), 4 * 5 * 4352);
  EXPECT_FALSE(warp_split_lighter_deep_pays(128, 2, 128, 2, 132, 6, int8_m1, true));
  // l3-8b.o at M = 4-8: six stages with the push area hold one CTA an SM, five hold two.
  const int int8_m8 = warp_split_stage_bytes(8, 8, 1, false);
  EXPECT_TRUE(warp_split_lighter_deep_pays(128, 1, 128, 2, 132, 6, int8_m8, true));
  EXPECT_TRUE(warp_split_lighter_deep_pays(128, 1, 128, 2, 132, 6, int8_m8, false));
  // l3-70b.o at M = 4: two waves at six stages, one at five.
  const int int8_m4 = warp_split_stage_bytes(8, 4, 1, false);
  EXPECT_TRUE(warp_split_lighter_deep_pays(256, 1, 256, 2, 132, 6, int8_m4, false));
  // A lighter plan that sits worse is never taken, whatever the bytes in flight.
  EXPECT_FALSE(warp_split_lighter_deep_pays(256, 3, 256, 2, 132, 6, int8_m8, true));
  // Occupancy bounds the bytes in flight too: a grid of three CTAs an SM where one fits.
  EXPECT_EQ(warp_split_in_flight_bytes(396, 132, 1, 6, int8_m1), 4 * 5 * 4352);
  // int4 at one tile (2304 B a stage) stays under the budget at two and three CTAs an SM.
  const int int4_m1 = warp_split_stage_bytes(4, 1, 1, false);
  EXPECT_LE(warp_split_in_flight_bytes(396, 132, 3, 6, int4_m1), kDeepInFlightBudgetBytes);
  EXPECT_EQ(warp_split_in_flight_bytes(0, 132, 2, 6, int8_m1), 0);
  EXPECT_EQ(warp_split_in_flight_bytes(256, 0, 2, 6, int8_m1), 0);
}

// Uneven grids, where the deep pipeline is tried: more CTAs than SMs, and the SMs given the most
// CTAs at most half of them (132 SMs).
TEST(DecodeConfig, UnevenGridsAreThoseWithFewBusiestSms) {
  EXPECT_FALSE(warp_split_grid_uneven(128, 132));  // one an SM at most: the few-CTA rule's
  EXPECT_FALSE(warp_split_grid_uneven(132, 132));
  EXPECT_TRUE(warp_split_grid_uneven(133, 132));   // one SM with two
  EXPECT_TRUE(warp_split_grid_uneven(192, 132));   // l3-8b.qkv at M = 1: 60 SMs with two
  EXPECT_TRUE(warp_split_grid_uneven(198, 132));   // 66 with two: half
  EXPECT_FALSE(warp_split_grid_uneven(199, 132));
  EXPECT_FALSE(warp_split_grid_uneven(256, 132));  // l3-70b.o, l3-70b.down: 124 with two
  EXPECT_TRUE(warp_split_grid_uneven(320, 132));   // 56 with three (the one-wave test decides)
  EXPECT_FALSE(warp_split_grid_uneven(396, 132));  // even: three each
  EXPECT_FALSE(warp_split_grid_uneven(192, 0));
}

// M 17-32 (3-4 token tiles) can run 3 stages a warp so that 3 CTAs fit an SM (int4 g128
// symmetric): on sm_90 an SM gives 3 CTAs 228 KB of shared memory, 1 KB of each reserved by the
// runtime. With 4 stages only 2 fit.
TEST(DecodeConfig, ThreeStagesLetThreeCtasHoldM32) {
  EXPECT_EQ(warp_split_stages_vary(3), kStages > 3);
  EXPECT_EQ(warp_split_stages_vary(4), kStages > 3);
  EXPECT_EQ(warp_split_min_stages(4), kStages > 3 ? 3 : kStages);
  auto cta_bytes = [](int tiles, int stages) {
    return kWarps * warp_split_region_bytes(
                        warp_split_stage_bytes(4, tiles * kTokensPerTile, 1, false), stages) +
           1024;
  };
  for (int tiles : {3, 4}) {
    EXPECT_LE(3 * cta_bytes(tiles, 3), 228 * 1024) << tiles << " token tiles";
    EXPECT_GT(3 * cta_bytes(tiles, 4), 228 * 1024) << tiles << " token tiles";
  }
}

}  // namespace
}  // namespace sailfish::decode
