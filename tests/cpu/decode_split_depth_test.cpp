// Split-K depth (src/decode/split_depth.h), proven on the CPU: splits tile the k-blocks exactly,
// the wave rule's worked examples, the pair and quad rules, the cluster epilogue's depth.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "decode/split_depth.h"

namespace sailfish::decode {
namespace {

TEST(DecodeConfig, SplitsTileEveryKBlockOnce) {
  for (int64_t k_blocks : {1, 2, 3, 7, 64, 100, 448}) {
    for (int splits = 1; splits <= 64; ++splits) {
      std::vector<int> hits(static_cast<size_t>(k_blocks), 0);
      for (int s = 0; s < splits; ++s) {
        const int64_t begin = split_begin(k_blocks, splits, s);
        const int64_t end = split_begin(k_blocks, splits, s + 1);
        ASSERT_LE(begin, end);
        for (int64_t kb = begin; kb < end; ++kb) ++hits[static_cast<size_t>(kb)];
      }
      for (int h : hits) ASSERT_EQ(h, 1) << k_blocks << " blocks, " << splits << " splits";
    }
  }
}

TEST(DecodeConfig, SplitCountWorkedExamples) {
  // The worked examples in split_depth.h: H200, warp-split kernel at M = 1, 4 CTAs/SM.
  EXPECT_EQ(split_count(128, 1, 128, 132, 4, kWarpSplitMinBlocksPerSplit), 4);
  EXPECT_EQ(split_count(96, 1, 64, 132, 4, kWarpSplitMinBlocksPerSplit), 2);
  EXPECT_EQ(split_count(448, 1, 64, 132, 4, kWarpSplitMinBlocksPerSplit), 1);
  // l3-8b.o at M = 16 (3 CTAs/SM): the wave allows 6, six blocks per warp cap it at 2, and
  // 128 CTAs cover more than half the SMs.
  EXPECT_EQ(warp_split_count(64, 1, 64, 132, 3), 2);
  EXPECT_EQ(warp_split_count(96, 1, 64, 132, 4), 2);
  EXPECT_EQ(warp_split_count(128, 1, 448, 132, 4), 4);
  // l3-8b.down (224 k-blocks) at M = 1: 9 by six blocks per warp, 8 by the wave.
  EXPECT_EQ(warp_split_count(64, 1, 224, 132, 4), 8);
  // m13b.o (5120 x 5120: 80 strips, 80 k-blocks) at M = 16: 4 by the wave, 3 by the blocks.
  EXPECT_EQ(warp_split_count(80, 1, 80, 132, 3), 3);
  // A router GEMV (K x N = 2880 x 32: one strip, 45 k-blocks) covers one SM at one split, so it
  // keeps two blocks per warp: 5 splits.
  EXPECT_EQ(warp_split_count(1, 1, 45, 132, 4), 5);
  EXPECT_EQ(warp_split_count(1, 1, 64, 132, 4), 8);
  // 32 strips at 2 splits cover fewer than half the SMs: two blocks per warp, 8 splits.
  EXPECT_EQ(warp_split_count(32, 1, 64, 132, 4), 8);
  // The edge: 33 strips at 2 splits are 66 CTAs, exactly half of 132 SMs ("at least half"): six
  // blocks per warp stay.
  EXPECT_EQ(warp_split_count(33, 1, 64, 132, 4), 2);
  EXPECT_EQ(warp_split_count(33, 1, 64, 131, 4), 2);
  EXPECT_EQ(warp_split_count(33, 1, 64, 133, 4), 8);
  // Never past one wave, never below the minimum blocks per split, never below one split.
  EXPECT_EQ(split_count(1, 1, 8, 132, 4), 2);
  EXPECT_EQ(split_count(1, 1, 2, 132, 4), 1);
  for (int64_t n_blocks : {1, 2, 64, 171}) {
    for (int64_t k_blocks : {1, 5, 64, 448}) {
      for (int occupancy : {1, 3, 6}) {
        const int s = split_count(n_blocks, 1, k_blocks, 132, occupancy);
        EXPECT_GE(s, 1);
        EXPECT_LE(s, std::max<int64_t>(1, k_blocks / kMinBlocksPerSplit));
        if (s > 1) EXPECT_LE(n_blocks * s, int64_t(132) * occupancy);
      }
    }
  }
}

TEST(DecodeConfig, WarpSplitKeepsSixBlocksPerWarp) {
  for (int64_t k_blocks : {16, 64, 224, 448}) {
    const int s = split_count(64, 1, k_blocks, 132, 3, kWarpSplitMinBlocksPerSplit);
    if (s > 1) EXPECT_GE(k_blocks / s, kWarpSplitMinBlocksPerSplit) << k_blocks;
    if (k_blocks < 2 * kWarpSplitMinBlocksPerSplit) EXPECT_EQ(s, 1) << k_blocks;
  }
  EXPECT_LE(warp_split_max_shared_bytes(8, kWarpSplitMaxTiles), 227 * 1024);
}

// The cluster epilogue's depth: the heuristic's if its clusters are all resident at once, else the
// deepest shallower one that is, where the loads it gives up cost less than the launch it saves;
// a forced depth as it is, if one cluster of it can be scheduled; otherwise none (kPartials).
TEST(DecodeConfig, ClusterSplitCount) {
  // Clusters resident at once on a fake GPU of 128 CTA slots where clusters of 5 or more CTAs do
  // not pack evenly (a GPC's slots are not a multiple of the cluster size).
  auto fake = [](int size) { return size >= 5 ? 96 / size : 128 / size; };
  const int64_t small = 0;  // weight bytes for which any shallower depth is worth a launch
  EXPECT_EQ(cluster_split_count(1, false, 10, small, fake), 0);  // one split: kStore
  EXPECT_EQ(cluster_split_count(4, false, 32, small, fake), 4);  // 32 clusters of 4 fit
  EXPECT_EQ(cluster_split_count(4, false, 33, small, fake), 3);  // 42 of 3 do
  EXPECT_EQ(cluster_split_count(8, false, 12, small, fake), 8);
  // 12 clusters of 8 fit, 13 of 7, 16 of 6, 19 of 5:
  EXPECT_EQ(cluster_split_count(8, false, 17, small, fake), 5);
  EXPECT_EQ(cluster_split_count(12, false, 12, small, fake), 8);  // at most kMaxClusterSplits
  EXPECT_EQ(cluster_split_count(4, false, 65, small, fake), 0);  // not even clusters of 2 fit
  // The measured trade (v10a): an l3-70b.down-sized weight keeps its depth and the reduce kernel,
  // an l3-8b.qkv-sized one gives up a split for the cluster; at the heuristic's depth size does
  // not matter.
  EXPECT_EQ(cluster_split_count(4, false, 33, 121'000'000, fake), 0);
  EXPECT_EQ(cluster_split_count(4, false, 33, 13'000'000, fake), 3);
  EXPECT_EQ(cluster_split_count(4, false, 32, 121'000'000, fake), 4);
  // The trade's edge: giving up one of four splits for 27 MB costs exactly the 9 MB a split the
  // launch saves (27 MB x 1 = 9 MB x 3): not less, so the reduce kernel stays; a byte less and
  // the cluster of 3 pays.
  EXPECT_EQ(cluster_split_count(4, false, 33, 27'000'000, fake), 0);
  EXPECT_EQ(cluster_split_count(4, false, 33, 26'999'999, fake), 3);
  // Forced depths are kept or refused, never changed.
  EXPECT_EQ(cluster_split_count(4, true, 1000, small, fake), 4);
  EXPECT_EQ(cluster_split_count(12, true, 1, small, fake), 0);
  EXPECT_EQ(cluster_split_count(6, true, 1, small, [](int) { return 0; }), 0);
  // The depth chosen never exceeds the heuristic's, the cap or the resident clusters, and gives up
  // splits only within the trade.
  for (int splits = 1; splits <= 16; ++splits) {
    for (int64_t needed : {1, 7, 16, 31, 64, 100}) {
      for (int64_t bytes : {int64_t(0), int64_t(5'000'000), int64_t(30'000'000)}) {
        const int s = cluster_split_count(splits, false, needed, bytes, fake);
        if (s == 0) continue;
        EXPECT_GE(s, 2);
        EXPECT_LE(s, std::min(splits, kMaxClusterSplits));
        EXPECT_GE(fake(s), needed);
        if (s < splits) EXPECT_LT(bytes * (splits - s), kClusterSavedStreamBytes * s);
      }
    }
  }
}

// The pair fallback (v13c, v29): where the byte rule keeps the reduce kernel, two clustered splits
// instead if every pair is resident and their grid leaves at most one SM in 16 idle. An
// l3-70b.o-sized weight (128 strips, 33.5 MB) at 4 splits on 132 SMs, clusters of 4 not all
// resident (fake: 120 of them).
TEST(DecodeConfig, PairFallbackKeepsNearlyEverySmBusy) {
  auto fake = [](int size) { return 480 / size; };
  EXPECT_EQ(cluster_split_count(4, false, 128, 33'554'432, fake), 0);  // the byte rule alone
  EXPECT_EQ(cluster_split_count(4, false, 128, 33'554'432, fake, 132), 2);
  // int8 l3-8b.down at M = 1 (58.7 MB, 64 strips, 6 splits; only pairs all resident): 128 CTAs
  // leave 4 of 132 SMs idle, within the rule; 61 strips (122 CTAs, 10 idle) are not.
  auto pairs_only = [](int size) { return size == 2 ? 66 : 10; };
  EXPECT_EQ(cluster_split_count(6, false, 64, 58'720'256, pairs_only), 0);
  EXPECT_EQ(cluster_split_count(6, false, 64, 58'720'256, pairs_only, 132), 2);
  EXPECT_EQ(cluster_split_count(6, false, 62, 58'720'256, pairs_only, 132), 2);  // 124 >= 123.75
  EXPECT_EQ(cluster_split_count(6, false, 61, 58'720'256, pairs_only, 132), 0);
  // The exact edge on 128 SMs: 60 pairs are 120 CTAs, 8 SMs idle, one in 16: still pairs; 59
  // pairs (118 CTAs, 10 idle) are not.
  EXPECT_EQ(cluster_split_count(6, false, 60, 58'720'256, pairs_only, 128), 2);
  EXPECT_EQ(cluster_split_count(6, false, 59, 58'720'256, pairs_only, 128), 0);
  // 60 strips: 120 CTAs leave 12 SMs idle; the reduce kernel stays.
  EXPECT_EQ(cluster_split_count(4, false, 60, 33'554'432, [](int) { return 59; }, 132), 0);
  // Pairs not all resident: none.
  EXPECT_EQ(cluster_split_count(4, false, 130, 33'554'432, [](int size) { return 120 / size; },
                                132),
            0);
  EXPECT_EQ(cluster_split_count(4, false, 241, 33'554'432, fake, 132), 0);
  // Where a deeper cluster fits, the fallback changes nothing; forced depths are kept as before.
  EXPECT_EQ(cluster_split_count(4, false, 100, 33'554'432, fake, 132), 4);
  EXPECT_EQ(cluster_split_count(4, true, 1000, 0, fake, 132), 4);
  EXPECT_EQ(cluster_split_count(4, true, 1000, 0, [](int) { return 0; }, 132), 0);
}

// The pair fallback at one token tile (v51): four clustered splits where the pairs' grid is
// uneven and four cut the busiest SM's blocks by a tenth. q32.down (80 strips x 432 k-blocks,
// 70.8 MB) at M = 1 on 132 SMs: 6 splits, clusters of 6 not all resident, the byte rule stops at 5.
TEST(DecodeConfig, QuadFallbackEvensFewStripsOverLongK) {
  if (!kQuadFallback) GTEST_SKIP() << "the rule is off in this build";
  // Pairs: 160 CTAs, 2 x 216 = 432 blocks on the busiest SM; four: 320 CTAs, 3 x 108 = 324.
  EXPECT_TRUE(quad_fallback_pays(80, 432, 132));
  EXPECT_TRUE(quad_fallback_pays(84, 336, 132));  // g27.down: 336 -> 252
  // l3-70b.down (128 strips x 448) and l3-70b.o (128 x 128): the pairs already sit two an SM,
  // four cut nothing (2 x 224 = 448 against 4 x 112; 2 x 64 against 4 x 32).
  EXPECT_FALSE(quad_fallback_pays(128, 448, 132));
  EXPECT_FALSE(quad_fallback_pays(128, 128, 132));
  // Too few k-blocks for four splits of kWarpSplitMinBlocksPerSplit; no SMs.
  EXPECT_FALSE(quad_fallback_pays(80, 4 * kWarpSplitMinBlocksPerSplit - 1, 132));
  EXPECT_TRUE(quad_fallback_pays(80, 4 * kWarpSplitMinBlocksPerSplit, 132));
  EXPECT_FALSE(quad_fallback_pays(80, 432, 0));
  // No gain at all (the exact edge, 10 x quads = 9 x pairs, is below). 66 strips of 96 blocks:
  // pairs one an SM (48), four two an SM (48). 100 strips of 96: pairs 2 x 48, four 4 x 24.
  EXPECT_FALSE(quad_fallback_pays(66, 96, 132));
  EXPECT_FALSE(quad_fallback_pays(100, 96, 132));
  // Exactly a tenth: 270 strips of 96, pairs 5 x 48 = 240 on the busiest SM, four 9 x 24 = 216
  // (10 x 216 = 9 x 240): four pay. 298 strips: pairs 5 x 48 = 240, four 10 x 24 = 240: no.
  EXPECT_TRUE(quad_fallback_pays(270, 96, 132));
  EXPECT_FALSE(quad_fallback_pays(298, 96, 132));

  const int64_t q32_bytes = 70'778'880;
  auto no_sixes = [](int size) { return size >= 5 ? 60 : 528 / size; };  // 132 x 4 slots
  EXPECT_EQ(cluster_split_count(6, false, 80, q32_bytes, no_sixes, 132), 2);  // pairs only
  EXPECT_EQ(cluster_split_count(6, false, 80, q32_bytes, no_sixes, 132, 432), 4);
  // Four only where the heuristic depth was at least four, where their clusters are all resident
  // and where the pair fallback applies at all.
  auto pairs_fit = [](int size) { return size == 2 ? 264 : 60; };
  EXPECT_EQ(cluster_split_count(3, false, 80, q32_bytes, pairs_fit, 132, 432), 2);
  // A heuristic depth of three stays pairs even where clusters of four would all be resident
  // (and three would not): four splits are never deeper than the heuristic asked.
  auto no_threes = [](int size) { return size == 3 ? 60 : 528 / size; };
  EXPECT_EQ(cluster_split_count(3, false, 80, q32_bytes, no_threes, 132, 432), 2);
  EXPECT_EQ(cluster_split_count(4, false, 80, q32_bytes, no_threes, 132, 432), 4);
  EXPECT_EQ(cluster_split_count(6, false, 80, q32_bytes,
                                [](int size) { return size == 2 ? 80 : 79; }, 132, 432),
            2);
  EXPECT_EQ(cluster_split_count(6, false, 80, q32_bytes, no_sixes, 0, 432), 0);
  // The evenly placed pairs of l3-70b.down (128 strips x 448, 117 MB, 4 splits) stay pairs.
  EXPECT_EQ(cluster_split_count(4, false, 128, 117'440'512, [](int size) { return 480 / size; },
                                132, 448),
            2);
}

TEST(DecodeConfig, PartialUnevenWavesTakeTwoSplits) {
  EXPECT_TRUE(partial_wave_split_pays(224, 64, 132, 3));   // M = 16, 2 a SM at most of 3
  EXPECT_TRUE(partial_wave_split_pays(250, 128, 132, 3));
  EXPECT_TRUE(partial_wave_split_pays(380, 64, 132, 4));   // M = 1, 3 a SM at most of 4
  EXPECT_FALSE(partial_wave_split_pays(264, 64, 132, 3));  // even: 2 on every SM
  EXPECT_FALSE(partial_wave_split_pays(380, 64, 132, 3));  // 3 a SM of 3: full
  EXPECT_FALSE(partial_wave_split_pays(520, 64, 132, 4));  // 4 a SM of 4: full
  EXPECT_FALSE(partial_wave_split_pays(100, 64, 132, 4));  // fewer tiles than SMs: split_count's
  EXPECT_FALSE(partial_wave_split_pays(224, 46, 132, 3));  // 23 blocks a split: too short
  EXPECT_TRUE(partial_wave_split_pays(224, 48, 132, 3));   // 24 blocks a split: enough
  EXPECT_FALSE(partial_wave_split_pays(224, 64, 0, 3));
}

// ctas_per_sm counts the pair's push area (launch.cu).
TEST(DecodeConfig, Int8AtOneTokenTileTakesTwoSplitsPastOneCtaAnSm) {
  EXPECT_TRUE(int8_tail_split_pays(8, 1, 896, 128, 132, 3));   // l3-70b.gate_up, M = 1-3
  EXPECT_TRUE(int8_tail_split_pays(8, 1, 133, 128, 132, 3));   // one CTA more than SMs
  EXPECT_FALSE(int8_tail_split_pays(8, 1, 896, 128, 132, 2));  // M = 4-8: the pair lost
  EXPECT_FALSE(int8_tail_split_pays(8, 1, 132, 128, 132, 3));  // one CTA an SM: split_count's
  EXPECT_FALSE(int8_tail_split_pays(4, 1, 896, 128, 132, 6));  // int4 keeps the wave rules
  EXPECT_FALSE(int8_tail_split_pays(8, 2, 896, 128, 132, 3));  // M = 9-16
  EXPECT_FALSE(int8_tail_split_pays(8, 1, 896, 46, 132, 3));   // 23 blocks a split: too short
  EXPECT_TRUE(int8_tail_split_pays(8, 1, 896, 48, 132, 3));    // 24 blocks a split: enough
  EXPECT_FALSE(int8_tail_split_pays(8, 1, 896, 128, 0, 3));
}

TEST(DecodeConfig, UnevenOneWaveGridsTakeTwoSplits) {
  EXPECT_TRUE(one_wave_split_pays(448, 64, 132, 528));    // l3-8b.gate_up, M = 1: 256 -> 224
  EXPECT_FALSE(one_wave_split_pays(396, 64, 132, 528));   // 3 a SM either way: 192 -> 192
  EXPECT_TRUE(one_wave_split_pays(300, 64, 132, 528));    // 192 -> 160
  EXPECT_FALSE(one_wave_split_pays(520, 64, 132, 528));   // 4 a SM either way: 256 -> 256
  EXPECT_FALSE(one_wave_split_pays(896, 128, 132, 528));  // more than a wave: the other rule
  EXPECT_FALSE(one_wave_split_pays(100, 64, 132, 528));   // fewer tiles than SMs: split_count's
  EXPECT_FALSE(one_wave_split_pays(448, 22, 132, 528));   // 11 blocks a split: too short
  EXPECT_FALSE(one_wave_split_pays(448, 46, 132, 528));   // 23 blocks a split: too short
  EXPECT_TRUE(one_wave_split_pays(448, 48, 132, 528));    // 24 blocks a split: enough
  // Exactly a tenth (660 slots): 540 tiles of 64, 5 x 64 = 320 a SM at one split, 9 x 32 = 288
  // at two (10 x 288 = 9 x 320): two pay. 594 tiles: 5 x 64 against 9 x 32 too; 595: 10 x 32.
  EXPECT_TRUE(one_wave_split_pays(540, 64, 132, 660));
  EXPECT_FALSE(one_wave_split_pays(595, 64, 132, 660));
  EXPECT_FALSE(one_wave_split_pays(448, 64, 0, 528));
}

}  // namespace
}  // namespace sailfish::decode
