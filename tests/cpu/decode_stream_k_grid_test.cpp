// Stream-K within clusters (src/decode/stream_k_grid.h), proven on the CPU: runs tile a cluster's
// units, partial tiles park where the reduction looks, the plan evens out the busiest SM.
#include <gtest/gtest.h>

#include <vector>

#include "decode/stream_k_grid.h"

namespace sailfish::decode {
namespace {

// Stream-K (stream_k_grid.h): a cluster's runs tile its strips' flat units exactly once,
// stream_k_run_of finds the run of every unit, every run of a planned grid keeps six blocks a warp
// and spans at most two tiles, and for every tile several runs share, each contributor's sums sit
// in the slot the kernel parked them in: slot 0 exactly when the run left the tile through its last
// k-block (finish_tile, mid-loop), slot 1 when the run ended inside it.
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
  p = stream_k_plan(128, 1, 128, 132, 4, kStreamKMaxStrips, 0, fits);  // the most strips there are
  EXPECT_EQ(p.strips, kStreamKMaxStrips);
  // Every cluster must be resident at once: l3-8b.qkv's 32 clusters of eight where only 31 are
  // leaves three strips a cluster of four (also 48 blocks on the busiest SM, in CTAs of 48 blocks,
  // a full tie with six strips a cluster of eight that the smaller cluster keeps).
  p = stream_k_plan(96, 1, 64, 132, 5, 0, 0, [](int size) { return size == 8 ? 31 : 1000; });
  EXPECT_EQ(p.strips, 3);
  EXPECT_EQ(p.cluster, 4);
  p = stream_k_plan(96, 1, 64, 132, 5, 0, 0, [](int size) { return size == 8 ? 32 : 1000; });
  EXPECT_EQ(p.cluster, 8);
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

// Candidates that tie on the busiest SM and on the CTA length are the same grid to the cost model;
// the smallest cluster, tried first, keeps the tie (its reduction sums the fewest runs, 4 C).
// l3-8b.o (64 strips of 64 k-blocks) at 3 CTAs an SM has four such grids of 32-block CTAs, one
// on each busy SM: one strip in clusters of two, two in four, three in six (132 CTAs), four in
// eight. A `<=` for `<` on the CTA length, or the cluster sizes tried largest first, gives S = 4,
// C = 8.
TEST(DecodeConfig, StreamKPlanFullTieGoesToTheSmallestCluster) {
  const auto fits = [](int) { return 1000; };
  const StreamKPlan p = stream_k_plan(64, 1, 64, 132, 3, 0, 0, fits);
  EXPECT_EQ(p.strips, 1);
  EXPECT_EQ(p.cluster, 2);
  for (int s = 1; s <= 4; ++s) {
    const int c = 2 * s;
    const StreamKPlan tied = stream_k_plan(64, 1, 64, 132, 3, s, c, fits);
    ASSERT_EQ(tied.strips, s);
    ASSERT_EQ(tied.cluster, c);
    const int64_t ctas = (64 + s - 1) / s * c;
    EXPECT_EQ((s * 64 + c - 1) / c, 32) << "S = " << s;
    EXPECT_EQ(busiest_sm_blocks(ctas, 32, 132), 32) << "S = " << s;
  }
}

// The plan's limits are inclusive where the kernel allows it: a grid of exactly one CTA a slot,
// and runs of exactly kWarpSplitMinBlocksPerSplit / kWarpSplitWarps blocks, still fit.
TEST(DecodeConfig, StreamKPlanLimitsAreInclusive) {
  const auto fits = [](int) { return 1000; };
  // 66 strips, one a cluster of two: 132 CTAs fill the 132 slots of one CTA an SM; 67 need 134.
  StreamKPlan p = stream_k_plan(66, 1, 64, 132, 1, 1, 2, fits);
  EXPECT_EQ(p.strips, 1);
  EXPECT_EQ(p.cluster, 2);
  p = stream_k_plan(67, 1, 64, 132, 1, 1, 2, fits);
  EXPECT_EQ(p.strips, 0);
  // 48 units on 2 CTAs: 8 runs of 6 blocks. 47 units leave some runs 5.
  p = stream_k_plan(4, 1, 48, 132, 5, 1, 2, fits);
  EXPECT_EQ(p.strips, 1);
  EXPECT_EQ(p.cluster, 2);
  p = stream_k_plan(4, 1, 47, 132, 5, 1, 2, fits);
  EXPECT_EQ(p.strips, 0);
}

}  // namespace
}  // namespace sailfish::decode
