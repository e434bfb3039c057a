// Decode-tier partition math (src/decode/config.h), proven on the CPU: splits tile the k-blocks
// exactly, token tiles cover M, and the shared-memory formula fits the H200.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "decode/config.h"

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
  // The worked examples in config.h: H200, warp-split kernel at M = 1, 4 CTAs/SM.
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

TEST(DecodeConfig, TokenTilesCoverM) {
  for (int64_t m = 1; m <= 64; ++m) {
    const int tiles = token_tiles_for(m);
    EXPECT_GE(tiles * kTokensPerTile, m);
    EXPECT_LE(tiles, kMaxTokenTiles);
    // No tile count wastes a whole tile beyond the ones compiled.
    EXPECT_TRUE(tiles == 1 || tiles == 2 || tiles == 3 || tiles == 4 || tiles == 6 || tiles == 8);
  }
  EXPECT_EQ(token_tiles_for(1), 1);
  EXPECT_EQ(token_tiles_for(16), 2);
  EXPECT_EQ(token_tiles_for(17), 3);
  EXPECT_EQ(token_tiles_for(64), 8);
}

TEST(DecodeConfig, SharedMemoryFitsHopper) {
  for (int bits : {4, 8}) {
    for (int tiles : {1, 2, 3, 4, 6, 8}) {
      EXPECT_LE(shared_bytes(bits, tiles), 227 * 1024);
      EXPECT_EQ(stage_bytes(bits, tiles) % 16, 0);
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

// Warp-split stages hold what the problem reads: M = 1, group 128, symmetric int4 is the 2 KB
// block, one 128-byte activation row and one 128-byte scale row; the maximum covers 8 rows per
// token tile and four scale rows (group 16) with their zero shifts and folds.
TEST(DecodeConfig, WarpSplitStagesAreSizedToTheProblem) {
  EXPECT_EQ(meta_rows_for(7), 1);   // group 128
  EXPECT_EQ(meta_rows_for(30), 1);  // channelwise
  EXPECT_EQ(meta_rows_for(5), 2);   // group 32
  EXPECT_EQ(meta_rows_for(4), 4);   // group 16
  EXPECT_EQ(warp_split_stage_bytes(4, 1, 1, false), 2048 + 128 + 128);
  EXPECT_EQ(warp_split_stage_bytes(8, 16, 4, true), 4096 + 16 * 128 + 4 * 3 * 128);
  EXPECT_EQ(kWarps * warp_split_region_bytes(warp_split_stage_bytes(4, 1, 1, false), kStages),
            4 * (128 + kStages * 2304));
  for (int bits : {4, 8}) {
    for (int tiles = 1; tiles <= kWarpSplitMaxTiles; ++tiles) {
      for (int rows = 1; rows <= tiles * kTokensPerTile; ++rows) {
        for (int shift : {4, 5, 6, 7, 30}) {
          for (bool zero : {false, true}) {
            const int stage = warp_split_stage_bytes(bits, rows, meta_rows_for(shift), zero);
            EXPECT_EQ(stage % 128, 0);
            for (int stages : {warp_split_min_stages(tiles), kStages}) {
              EXPECT_LE(kWarps * warp_split_region_bytes(stage, stages),
                        warp_split_max_shared_bytes(bits, tiles));
            }
            if (warp_split_has_deep(bits, tiles)) {
              const int deep = warp_split_deep_stages(tiles);
              EXPECT_LE(kWarps * warp_split_region_bytes(stage, deep),
                        warp_split_max_shared_bytes(bits, tiles, deep));
            }
            if (const int lighter = warp_split_lighter_deep_stages(bits, tiles); lighter > 0) {
              EXPECT_LE(kWarps * warp_split_region_bytes(stage, lighter),
                        warp_split_max_shared_bytes(bits, tiles, lighter));
            }
          }
        }
      }
    }
  }
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
  // The rule's exact edge: 10 x quads <= 9 x pairs. 66 strips of 96 blocks: pairs one an SM (48),
  // four two an SM (48): no gain. 100 strips of 96: pairs 2 x 48 = 96, four 4 x 24 = 96: none.
  EXPECT_FALSE(quad_fallback_pays(66, 96, 132));
  EXPECT_FALSE(quad_fallback_pays(100, 96, 132));

  const int64_t q32_bytes = 70'778'880;
  auto no_sixes = [](int size) { return size >= 5 ? 60 : 528 / size; };  // 132 x 4 slots
  EXPECT_EQ(cluster_split_count(6, false, 80, q32_bytes, no_sixes, 132), 2);  // pairs only
  EXPECT_EQ(cluster_split_count(6, false, 80, q32_bytes, no_sixes, 132, 432), 4);
  // Four only where the heuristic depth was at least four, where their clusters are all resident
  // and where the pair fallback applies at all.
  auto pairs_fit = [](int size) { return size == 2 ? 264 : 60; };
  EXPECT_EQ(cluster_split_count(3, false, 80, q32_bytes, pairs_fit, 132, 432), 2);
  EXPECT_EQ(cluster_split_count(6, false, 80, q32_bytes,
                                [](int size) { return size == 2 ? 80 : 79; }, 132, 432),
            2);
  EXPECT_EQ(cluster_split_count(6, false, 80, q32_bytes, no_sixes, 0, 432), 0);
  // The evenly placed pairs of l3-70b.down (128 strips x 448, 117 MB, 4 splits) stay pairs.
  EXPECT_EQ(cluster_split_count(4, false, 128, 117'440'512, [](int size) { return 480 / size; },
                                132, 448),
            2);
}

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

// int8 at one token tile also has a deep instance one stage short of the deepest. A plan takes it
// where it sits better on the SMs (more than one wave < one wave < one wave with room on the
// busiest SM for a CTA of the next launch), else, with bf16 activations, where the deepest would
// keep more than kDeepInFlightBudgetBytes in flight on its busiest SM. The cases are the H200
// rows the rule was drawn from (v42: int8 g128, 132 SMs).
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

// H200: 228 KB of shared memory an SM, 1 KB of it reserved for each resident CTA.
TEST(DecodeConfig, SpreadPaddingHoldsAnSmToTheEvenShare) {
  constexpr int kSmem = 233472, kReserved = 1024;
  // l3-70b.down at M = 9, two clustered splits of five stages: 256 CTAs, an even share of two an
  // SM, where 69 KB CTAs fit three.
  const int shared = 4 * warp_split_region_bytes(warp_split_stage_bytes(4, 9, 1, false), 5) +
                     cluster_receive_bytes(2, 2);
  ASSERT_LE(3 * (shared + kReserved), kSmem);
  const int padded = spread_shared_bytes(shared, 2, kSmem, kReserved);
  EXPECT_EQ(padded % 128, 0);
  EXPECT_GT(padded, shared);
  EXPECT_LE(2 * (padded + kReserved), kSmem);  // two still fit
  EXPECT_GT(3 * (padded + kReserved), kSmem);  // a third does not
  EXPECT_LE(3 * (padded - 128 + kReserved), kSmem);  // the least such multiple of 128
  // One an SM (l3-8b.o's 128 CTAs): padded to more than half of the SM.
  const int one = spread_shared_bytes(37 * 1024, 1, kSmem, kReserved);
  EXPECT_LE(one + kReserved, kSmem);
  EXPECT_GT(2 * (one + kReserved), kSmem);
  // Nothing to pad where the CTAs already hold the SM to the share, or for no share.
  EXPECT_EQ(spread_shared_bytes(80000, 2, kSmem, kReserved), 0);
  EXPECT_EQ(spread_shared_bytes(shared, 0, kSmem, kReserved), 0);
  // Nor past what one CTA may ask for.
  EXPECT_EQ(spread_shared_bytes(1024, 1, 600 * 1024, kReserved), 0);
}

// The default rule: a share of two or more CTAs an SM, on a grid whose busiest SMs are more than
// half of them (132 SMs, as the H200), whatever the warps stream.
TEST(DecodeConfig, SpreadPaysOnEvenGridsOfTwoOrMoreAnSm) {
  constexpr int64_t kShort = 16 * 1024;
  EXPECT_TRUE(spread_pays(256, 132, kShort));   // l3-70b.o at M = 1: 124 SMs with two
  EXPECT_FALSE(spread_pays(192, 132, kShort));  // l3-8b.qkv at M = 1: 60 SMs with two, uneven
  EXPECT_FALSE(spread_pays(320, 132, kShort));  // 56 SMs with three
  EXPECT_TRUE(spread_pays(384, 132, kShort));   // 120 SMs with three
  EXPECT_TRUE(spread_pays(264, 132, kShort));   // two on every SM
  EXPECT_FALSE(spread_pays(192, 132, 1 << 20));  // long warps do not change a share of two
  EXPECT_FALSE(spread_pays(256, 0, kShort));
}

// A share of one CTA an SM pads only where each warp streams at least 64 KB (v49): int8
// 14336 x 4096 at two splits (l3-8b.down, 112 KB a warp) gained, l3-8b.o (16 KB int4, 32 KB
// int8) lost the next launch's early start.
TEST(DecodeConfig, SpreadPaysOnAShareOfOneOnlyForLongWarps) {
  constexpr int64_t kInt4Block = 2048, kInt8Block = 4096;
  // l3-8b.down int8: K = 14336 is 224 k-blocks; two splits, four warps: 28 blocks a warp.
  EXPECT_EQ(warp_split_warp_stream_bytes(224, 2, kInt8Block), 112 * 1024);
  // l3-8b.o: K = 4096 is 64 k-blocks; 8 blocks a warp.
  EXPECT_EQ(warp_split_warp_stream_bytes(64, 2, kInt4Block), 16 * 1024);
  EXPECT_EQ(warp_split_warp_stream_bytes(64, 2, kInt8Block), 32 * 1024);
  // Rounded up: 57 k-blocks in two splits is 29 a split, 8 a warp.
  EXPECT_EQ(warp_split_warp_stream_bytes(57, 2, kInt4Block), 8 * kInt4Block);
  EXPECT_EQ(warp_split_warp_stream_bytes(64, 1, kInt4Block), 16 * kInt4Block);

  EXPECT_TRUE(spread_pays(128, 132, warp_split_warp_stream_bytes(224, 2, kInt8Block)));
  EXPECT_FALSE(spread_pays(128, 132, warp_split_warp_stream_bytes(64, 2, kInt8Block)));
  EXPECT_FALSE(spread_pays(128, 132, warp_split_warp_stream_bytes(64, 2, kInt4Block)));
  EXPECT_TRUE(spread_pays(132, 132, kShareOneLongWarpBytes));
  EXPECT_FALSE(spread_pays(132, 132, kShareOneLongWarpBytes - 1));
  EXPECT_FALSE(spread_pays(1, 132, 1 << 20));  // one CTA: nothing to spread
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

// The cluster push form's fragments and slots: every fragment of every cluster size has one owner
// rank; each owner's slots hold exactly one (fragment, sender) pair each, the owner never sending
// to itself, so the bytes an owner expects are the bytes sent to it. Rank 0 owns all at 2 ranks
// (v21's layout: slot = fragment); ranks past the fragments own none (l3-8b.down at M = 1: 7
// ranks, 4 fragments).
TEST(DecodeConfig, ClusterPushOwnersAndSlots) {
  for (int tiles = 1; tiles <= kClusterPushMaxTiles; ++tiles) {
    const int fragments = 4 * tiles;
    for (int splits = 2; splits <= kMaxClusterSplits; ++splits) {
      const std::string where =
          std::to_string(tiles) + " tiles, " + std::to_string(splits) + " ranks";
      int owned_total = 0;
      for (int rank = 0; rank < splits; ++rank) {
        const int owned = cluster_push_owned(rank, splits, tiles);
        owned_total += owned;
        EXPECT_LE(owned, cluster_push_owned(0, splits, tiles)) << where;
        std::vector<int> filled(static_cast<size_t>(owned * (splits - 1)), 0);
        int owned_seen = 0;
        for (int f = 0; f < fragments; ++f) {
          const int owners = splits == 2 ? 1 : splits;
          EXPECT_EQ(cluster_push_owner(f, splits), f % owners) << where;
          EXPECT_EQ(cluster_push_index(f, splits), f / owners) << where;
          if (cluster_push_owner(f, splits) != rank) continue;
          ++owned_seen;
          for (int sender = 0; sender < splits; ++sender) {
            if (sender == rank) continue;
            const int slot = cluster_push_slot(f, sender, splits);
            ASSERT_GE(slot, 0) << where;
            ASSERT_LT(slot, owned * (splits - 1)) << where << ", fragment " << f;
            ++filled[static_cast<size_t>(slot)];
          }
        }
        EXPECT_EQ(owned_seen, owned) << where << ", rank " << rank;
        for (int count : filled) EXPECT_EQ(count, 1) << where << ", rank " << rank;
        EXPECT_LE(owned * (splits - 1) * kClusterFragmentBytes,
                  cluster_receive_slot_bytes(splits, tiles))
            << where;
      }
      EXPECT_EQ(owned_total, fragments) << where;
    }
  }
  EXPECT_EQ(cluster_push_owned(0, 2, 2), 8);
  EXPECT_EQ(cluster_push_owned(1, 2, 1), 0);
  for (int f = 0; f < 8; ++f) EXPECT_EQ(cluster_push_slot(f, 1, 2), f);
  EXPECT_EQ(cluster_push_owned(4, 7, 1), 0);
  EXPECT_EQ(cluster_push_owned(3, 7, 1), 1);
  EXPECT_EQ(cluster_push_owned(0, 3, 2), 3);
  EXPECT_EQ(cluster_push_owned(2, 3, 2), 2);
}

// The receive area: the busiest owner's fragments from every other rank (32 lanes x 16 bytes
// each), then the barrier. It must still let one CTA of the deepest push-capable instances fit an
// SM at the largest area, and leave l3-8b.o's CTA (M = 1, six stages, 2 ranks) room for the next
// layer's under programmatic dependent launch (two an SM).
TEST(DecodeConfig, ClusterPushReceiveArea) {
  EXPECT_EQ(kClusterFragmentBytes, 512);
  EXPECT_EQ(cluster_receive_bytes(2, 1), 4 * 512 + 16);
  EXPECT_EQ(cluster_receive_bytes(2, 2), 8 * 512 + 16);
  EXPECT_EQ(cluster_receive_bytes(3, 1), 2 * 2 * 512 + 16);
  EXPECT_EQ(cluster_receive_bytes(7, 1), 6 * 512 + 16);
  EXPECT_EQ(cluster_receive_bytes(7, 2), 2 * 6 * 512 + 16);
  EXPECT_EQ(cluster_receive_bytes(8, 2), 7 * 512 + 16);
  EXPECT_EQ(cluster_receive_max_bytes(1), 7 * 512 + 16);
  EXPECT_EQ(cluster_receive_max_bytes(2), 12 * 512 + 16);
  for (int tiles = 1; tiles <= kClusterPushMaxTiles; ++tiles) {
    for (int splits = 2; splits <= kMaxClusterSplits; ++splits) {
      EXPECT_EQ(cluster_receive_bytes(splits, tiles) % 16, 0);
      EXPECT_LE(cluster_receive_bytes(splits, tiles), cluster_receive_max_bytes(tiles));
    }
  }
  for (int bits : {4, 8}) {
    for (int tiles = 1; tiles <= kClusterPushMaxTiles; ++tiles) {
      const int stages = warp_split_has_deep(bits, tiles) ? warp_split_deep_stages(tiles) : kStages;
      EXPECT_LE(warp_split_max_shared_bytes(bits, tiles, stages) +
                    cluster_receive_max_bytes(tiles),
                227 * 1024)
          << bits << "-bit, " << tiles << " tiles";
    }
  }
  const int l3_8b_o = kWarps * warp_split_region_bytes(warp_split_stage_bytes(4, 1, 1, false),
                                                       warp_split_deep_stages(1));
  EXPECT_LE(2 * (l3_8b_o + cluster_receive_bytes(2, 1) + 1024), 228 * 1024);
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

TEST(DecodeConfig, PartialUnevenWavesTakeTwoSplits) {
  EXPECT_TRUE(partial_wave_split_pays(224, 64, 132, 3));   // M = 16, 2 a SM at most of 3
  EXPECT_TRUE(partial_wave_split_pays(250, 128, 132, 3));
  EXPECT_TRUE(partial_wave_split_pays(380, 64, 132, 4));   // M = 1, 3 a SM at most of 4
  EXPECT_FALSE(partial_wave_split_pays(264, 64, 132, 3));  // even: 2 on every SM
  EXPECT_FALSE(partial_wave_split_pays(380, 64, 132, 3));  // 3 a SM of 3: full
  EXPECT_FALSE(partial_wave_split_pays(520, 64, 132, 4));  // 4 a SM of 4: full
  EXPECT_FALSE(partial_wave_split_pays(100, 64, 132, 4));  // fewer tiles than SMs: split_count's
  EXPECT_FALSE(partial_wave_split_pays(224, 46, 132, 3));  // 23 blocks a split: too short
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
  EXPECT_FALSE(one_wave_split_pays(448, 64, 0, 528));
}

// Stream-K (config.h): a cluster's runs tile its strips' flat units exactly once, stream_k_run_of
// finds the run of every unit, every run of a planned grid keeps six blocks a warp and spans at
// most two tiles, and for every tile several
// runs share, each contributor's sums sit in the slot the kernel parked them in: slot 0 exactly
// when the run left the tile through its last k-block (finish_tile, mid-loop), slot 1 when the
// run ended inside it.
TEST(DecodeConfig, StreamKRunsTileTheClusterAndParkWhereTheReductionLooks) {
  for (int64_t n_blocks : {1, 4, 7, 96, 100}) {
    for (int64_t k_blocks : {8, 16, 45, 64, 224}) {
      for (int strips = 1; strips <= kStreamKMaxStrips; ++strips) {
        for (int cluster = 2; cluster <= kMaxClusterSplits; ++cluster) {
          const int runs = cluster * kWarpSplitWarps;
          for (int64_t q = 0; q * strips < n_blocks; ++q) {
            const int here = stream_k_cluster_strips(n_blocks, strips, q);
            ASSERT_GE(here, 1);
            ASSERT_LE(here, strips);
            const int64_t units = here * k_blocks;
            std::vector<int> hits(static_cast<size_t>(units), 0);
            for (int r = 0; r < runs; ++r) {
              const uint32_t u32 = static_cast<uint32_t>(units);
              const int64_t b = stream_k_run_begin(u32, runs, r);
              const int64_t e = stream_k_run_begin(u32, runs, r + 1);
              ASSERT_LE(b, e);
              for (int64_t u = b; u < e; ++u) {
                ++hits[static_cast<size_t>(u)];
                // The reduction finds a tile's first and last runs by one division.
                ASSERT_EQ(stream_k_run_of(u32, runs, static_cast<uint32_t>(u)), uint32_t(r));
              }
              if (units >= int64_t(cluster) * kWarpSplitMinBlocksPerSplit) {
                EXPECT_GE(e - b, kWarpSplitMinBlocksPerSplit / kWarpSplitWarps);
              }
              if (b == e) continue;
              // The kernel's view: the run starts in tile b / k_blocks at k-block b % k_blocks,
              // finishes each tile it reaches the end of, and parks a partial one.
              const int64_t first_tile = b / k_blocks, last_tile = (e - 1) / k_blocks;
              for (int64_t t = first_tile; t <= last_tile; ++t) {
                const int64_t tile_begin = t * k_blocks, tile_end = tile_begin + k_blocks;
                const bool whole = b <= tile_begin && e >= tile_end;
                if (whole) continue;  // stored by the run
                const bool parked_mid_loop = e >= tile_end;  // finish_tile on a partial tile
                EXPECT_EQ(stream_k_parked_at_tile_end(static_cast<uint32_t>(e),
                                                      static_cast<uint32_t>(tile_end)),
                          parked_mid_loop);
                if (parked_mid_loop) {
                  EXPECT_EQ(t, first_tile) << "slot 0 holds one tile: the run's first";
                }
              }
              if (units >= int64_t(cluster) * kWarpSplitMinBlocksPerSplit) {
                EXPECT_LE(last_tile - first_tile, 1) << "a run crosses at most one strip edge";
              }
            }
            for (int h : hits) ASSERT_EQ(h, 1);
          }
        }
      }
    }
  }
}

TEST(DecodeConfig, StreamKPlanEvensOutTheBusiestSm) {
  const auto fits = [](int) { return 1000; };
  // l3-8b.qkv at M = 1 on the H200 (5 CTAs an SM): the split plan puts 2 CTAs of 32 blocks on 60
  // SMs (64); three strips a cluster of eight CTAs is 256 CTAs of 24 blocks, 48 on the busiest
  // SMs. (Three a cluster of four also gives 48, in CTAs of 48 blocks: the tie goes to shorter.)
  StreamKPlan p = stream_k_plan(96, 1, 64, 132, 5, 0, 0, fits);
  EXPECT_EQ(p.strips, 3);
  EXPECT_EQ(p.cluster, 8);
  // Forced strips or cluster size: that S or C only.
  p = stream_k_plan(96, 1, 64, 132, 5, 0, 4, fits);
  EXPECT_EQ(p.strips, 3);
  EXPECT_EQ(p.cluster, 4);
  p = stream_k_plan(128, 1, 128, 132, 4, 5, 0, fits);
  EXPECT_EQ(p.strips, 5);
  // Clusters that cannot all be resident, runs under six blocks a warp, or more units x runs
  // than the kernel's 32-bit run arithmetic holds: none fits.
  p = stream_k_plan(96, 1, 64, 132, 5, 0, 0, [](int) { return 0; });
  EXPECT_EQ(p.strips, 0);
  p = stream_k_plan(4, 1, 8, 132, 5, 1, 0, fits);  // 8 units < 2 x 24
  EXPECT_EQ(p.strips, 0);
  p = stream_k_plan(4, 1, int64_t(1) << 28, 132, 5, 1, 0, fits);
  EXPECT_EQ(p.strips, 0);
  // Every grid it returns keeps six blocks a warp, one CTA a slot, 32-bit run arithmetic, and no
  // other candidate has a less busy SM.
  for (int64_t n_blocks : {1, 7, 96, 448}) {
    for (int64_t k_blocks : {16, 64, 128}) {
      p = stream_k_plan(n_blocks, 1, k_blocks, 132, 3, 0, 0, fits);
      if (p.strips == 0) continue;
      const int64_t units = p.strips * k_blocks;
      const int64_t ctas = (n_blocks + p.strips - 1) / p.strips * p.cluster;
      EXPECT_GE(units, int64_t(p.cluster) * kWarpSplitMinBlocksPerSplit);
      EXPECT_LE(ctas, 132 * 3);
      EXPECT_LT(units * p.cluster * kWarpSplitWarps, kStreamKMaxUnitRuns);
      const int64_t cost = busiest_sm_blocks(ctas, (units + p.cluster - 1) / p.cluster, 132);
      for (int c = 2; c <= kMaxClusterSplits; ++c) {
        for (int s = 1; s <= kStreamKMaxStrips; ++s) {
          const StreamKPlan other = stream_k_plan(n_blocks, 1, k_blocks, 132, 3, s, c, fits);
          if (other.strips == 0) continue;
          const int64_t other_ctas = (n_blocks + s - 1) / s * c;
          EXPECT_LE(cost, busiest_sm_blocks(other_ctas, (s * k_blocks + c - 1) / c, 132))
              << n_blocks << " strips, " << k_blocks << " k-blocks";
        }
      }
    }
  }
}

}  // namespace
}  // namespace sailfish::decode
