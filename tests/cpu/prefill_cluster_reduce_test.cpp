// The prefill tier's clustered split grid (src/prefill/cluster_reduce.h), proven on the CPU: the
// clustered schedule hands every (tile, split) unit to exactly one CTA, and a cluster's CTAs (cta /
// splits) the splits of one tile in rank order; the ranks' token-group shares cover each group
// once; the exchange area's offsets are distinct, 16-byte aligned and inside the area; and the
// rule for when a plan may take the clusters.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "prefill/cluster_reduce.h"
#include "prefill/stream_k.h"

namespace sailfish::prefill {
namespace {

TEST(PrefillClusterReduce, ScheduleGivesEachClusterOneTileInRankOrder) {
  for (int n_tiles : {1, 4, 80}) {
    for (int m_tiles : {1, 3}) {
      for (int splits = 2; splits <= kMaxClusterSplits; ++splits) {
        const int k_blocks = 13;
        const int tiles = n_tiles * m_tiles;
        const int grid = tiles * splits;
        std::vector<int> hits(static_cast<size_t>(tiles) * k_blocks, 0);
        for (int cta = 0; cta < grid; ++cta) {
          WorkSchedule schedule(n_tiles, m_tiles, k_blocks, splits, false, cta, grid,
                                /*clustered=*/true);
          WorkPiece piece;
          ASSERT_TRUE(schedule.next(&piece)) << "cta " << cta;
          // The cluster's tile, in unit_coord order, and the CTA's rank as its split.
          const UnitCoord expected = unit_coord(cta / splits, n_tiles, m_tiles);
          EXPECT_EQ(piece.unit.n_tile, expected.n_tile) << "cta " << cta;
          EXPECT_EQ(piece.unit.m_tile, expected.m_tile) << "cta " << cta;
          EXPECT_EQ(piece.unit.split, cta % splits) << "cta " << cta;
          EXPECT_EQ(piece.slot, -1);
          EXPECT_EQ(piece.kb_begin, split_begin(k_blocks, splits, cta % splits));
          EXPECT_EQ(piece.kb_end, split_begin(k_blocks, splits, cta % splits + 1));
          const int tile = cta / splits;
          for (int kb = piece.kb_begin; kb < piece.kb_end; ++kb) {
            ++hits[static_cast<size_t>(tile) * k_blocks + kb];
          }
          EXPECT_FALSE(schedule.next(&piece)) << "cta " << cta << ": one unit a CTA";
        }
        for (size_t i = 0; i < hits.size(); ++i) {
          ASSERT_EQ(hits[i], 1) << n_tiles << "x" << m_tiles << " tiles, " << splits
                                << " splits: (tile, k-block) " << i;
        }
      }
    }
  }
}

TEST(PrefillClusterReduce, RanksShareTheTokenGroupsOnce) {
  for (int tokens : {16, 32, 64}) {
    for (int splits = 2; splits <= kMaxClusterSplits; ++splits) {
      for (int j = 0; j < tokens / 8; ++j) {
        int owners = 0;
        for (int rank = 0; rank < splits; ++rank) owners += rank_owns_group(j, rank, splits);
        EXPECT_EQ(owners, 1) << tokens << " tokens, " << splits << " splits, group " << j;
      }
    }
  }
}

TEST(PrefillClusterReduce, ExchangeOffsetsAreDistinctAlignedAndInside) {
  for (int tokens : {16, 32, 64}) {
    std::set<int> seen;
    for (int consumer = 0; consumer < kConsumers; ++consumer) {
      for (int j = 0; j < tokens / 8; ++j) {
        for (int thread = 0; thread < 128; ++thread) {
          const int offset = exchange_float_offset(tokens, consumer, j, thread);
          EXPECT_EQ(offset % 4, 0);  // four floats: one 16-byte store
          EXPECT_GE(offset, 0);
          EXPECT_LE(4 * (offset + 4), exchange_bytes(tokens));
          EXPECT_TRUE(seen.insert(offset).second) << tokens << " tokens: offset " << offset;
        }
      }
    }
    // The area is exactly the consumers' accumulators: kTokens / 2 floats a thread.
    EXPECT_EQ(static_cast<int>(seen.size()) * 16, exchange_bytes(tokens));
    EXPECT_EQ(exchange_bytes(tokens), kConsumers * 128 * tokens / 2 * 4);
  }
}

TEST(PrefillClusterReduce, FitsOnlyOneWaveOfTwoToEightSplitsAtNarrowWidths) {
  // l3-70b.qkv at M = 64 on 132 SMs: 80 tiles x 3 splits = 240 CTAs of the 264 slots.
  EXPECT_TRUE(cluster_reduce_fits(64, 3, 80, 132));
  EXPECT_TRUE(cluster_reduce_fits(64, 8, 33, 132));   // 264: exactly one wave
  EXPECT_FALSE(cluster_reduce_fits(64, 8, 34, 132));  // 272: a second wave
  EXPECT_FALSE(cluster_reduce_fits(64, 1, 80, 132));  // nothing to sum
  EXPECT_FALSE(cluster_reduce_fits(64, 9, 4, 132));   // past the portable cluster size
  EXPECT_FALSE(cluster_reduce_fits(128, 2, 4, 132));  // one CTA an SM: not a cluster width
  EXPECT_TRUE(cluster_reduce_fits(16, 2, 1, 132));
}

}  // namespace
}  // namespace sailfish::prefill
