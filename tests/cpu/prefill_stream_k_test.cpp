// Prefill work schedules (src/prefill/stream_k.h), proven on the CPU: both forms hand every
// (tile, k-block) to exactly one CTA; a Stream-K grid's shared pieces land in distinct slots that
// the fixup kernel finds again from the tile alone; and the cost model takes Stream-K only where
// the split grid leaves SMs idle.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "prefill/stream_k.h"

namespace sailfish::prefill {
namespace {

struct Walk {
  std::vector<int> hits;                  // per flat (tile, k-block)
  std::map<int, std::vector<int>> slots;  // tile -> slots of its shared pieces, in CTA order
  int whole_tiles = 0;
};

Walk walk_all(int n_tiles, int m_tiles, int k_blocks, int splits, bool stream_k, int grid) {
  Walk w;
  w.hits.assign(static_cast<size_t>(n_tiles) * m_tiles * k_blocks, 0);
  for (int cta = 0; cta < grid; ++cta) {
    WorkSchedule schedule(n_tiles, m_tiles, k_blocks, splits, stream_k, cta, grid);
    WorkPiece piece;
    int pieces = 0, shared = 0;
    while (schedule.next(&piece)) {
      ++pieces;
      EXPECT_GE(piece.kb_begin, 0);
      EXPECT_LT(piece.kb_begin, piece.kb_end);
      EXPECT_LE(piece.kb_end, k_blocks);
      // The tile index in unit order: the inverse of unit_coord is found by search (small sizes).
      int tile = -1;
      for (int t = 0; t < n_tiles * m_tiles; ++t) {
        const UnitCoord u = unit_coord(t, n_tiles, m_tiles);
        if (u.n_tile == piece.unit.n_tile && u.m_tile == piece.unit.m_tile) tile = t;
      }
      EXPECT_GE(tile, 0);
      for (int kb = piece.kb_begin; kb < piece.kb_end; ++kb) {
        ++w.hits[static_cast<size_t>(tile) * k_blocks + kb];
      }
      if (piece.slot < 0) {
        if (stream_k) {
          EXPECT_EQ(piece.kb_begin, 0);
          EXPECT_EQ(piece.kb_end, k_blocks);
        }
        ++w.whole_tiles;
      } else {
        EXPECT_TRUE(stream_k);
        ++shared;
        EXPECT_TRUE(piece.slot == 2 * cta || piece.slot == 2 * cta + 1) << piece.slot;
        w.slots[tile].push_back(piece.slot);
      }
    }
    // A Stream-K run is never empty and has at most two shared pieces, its first and its last.
    if (stream_k) {
      EXPECT_GE(pieces, 1) << "cta " << cta << " of " << grid;
      EXPECT_LE(shared, 2) << "cta " << cta << " of " << grid;
    }
  }
  return w;
}

TEST(PrefillStreamK, EveryIterationOnceAndSlotsTheFixupFinds) {
  for (int n_tiles : {1, 3, 16, 17, 40}) {
    for (int m_tiles : {1, 2, 3}) {
      for (int k_blocks : {1, 4, 9, 128}) {
        const int64_t total = int64_t(n_tiles) * m_tiles * k_blocks;
        for (int grid : {1, 2, 7, 132, 264}) {
          if (grid > total) continue;  // the plan never launches more CTAs than iterations
          const Walk w = walk_all(n_tiles, m_tiles, k_blocks, 1, true, grid);
          for (int h : w.hits) ASSERT_EQ(h, 1);
          // The fixup's boundaries name each shared tile exactly once.
          std::map<int, int> summed;
          for (int b = 1; b < grid; ++b) {
            const int tile = stream_k_boundary_tile(b, total, grid, k_blocks);
            if (tile >= 0) ++summed[tile];
          }
          for (const auto& [tile, count] : summed) {
            EXPECT_EQ(count, 1) << "tile " << tile;
            EXPECT_TRUE(w.slots.count(tile)) << "tile " << tile << " is not shared";
          }
          EXPECT_EQ(summed.size(), w.slots.size());
          std::set<int> used;
          for (int tile = 0; tile < n_tiles * m_tiles; ++tile) {
            const int64_t first = int64_t(tile) * k_blocks;
            const int owner_first = stream_k_owner(first, total, grid);
            const int owner_last = stream_k_owner(first + k_blocks - 1, total, grid);
            ASSERT_LE(owner_first, owner_last);
            const auto it = w.slots.find(tile);
            if (owner_first == owner_last) {
              // One CTA's whole tile: stored by it, nothing for the fixup.
              EXPECT_TRUE(it == w.slots.end()) << "tile " << tile;
              continue;
            }
            ASSERT_TRUE(it != w.slots.end()) << "tile " << tile;
            // What the fixup kernel reads: the first owner's slot, then 2c for each later owner.
            std::vector<int> expected{
                stream_k_slot(owner_first, tile, k_blocks, total, grid)};
            for (int c = owner_first + 1; c <= owner_last; ++c) expected.push_back(2 * c);
            EXPECT_EQ(it->second, expected) << "tile " << tile << ", grid " << grid;
            for (int s : it->second) {
              EXPECT_LT(s, stream_k_slots(grid));
              EXPECT_TRUE(used.insert(s).second) << "slot " << s << " written twice";
            }
          }
        }
      }
    }
  }
}

TEST(PrefillStreamK, OwnerMatchesTheRuns) {
  for (int64_t total : {1, 5, 132, 1000, 57344}) {
    for (int grid : {1, 3, 132, 264}) {
      if (grid > total) continue;
      for (int cta = 0; cta < grid; ++cta) {
        for (int64_t it = split_begin(total, grid, cta); it < split_begin(total, grid, cta + 1);
             ++it) {
          ASSERT_EQ(stream_k_owner(it, total, grid), cta) << total << " / " << grid;
        }
      }
    }
  }
}

TEST(PrefillStreamK, SplitGridScheduleIsTheUnitOrder) {
  // The split form walks units cta, cta + grid, ... exactly as the kernel did before schedules.
  const int n_tiles = 17, m_tiles = 3, k_blocks = 13, splits = 3, grid = 20;
  const Walk w = walk_all(n_tiles, m_tiles, k_blocks, splits, false, grid);
  for (int h : w.hits) ASSERT_EQ(h, 1);
  EXPECT_EQ(w.whole_tiles, n_tiles * m_tiles * splits);  // every unit, none to a slot
  WorkSchedule schedule(n_tiles, m_tiles, k_blocks, splits, false, 5, grid);
  WorkPiece piece;
  for (int unit = 5; unit < n_tiles * m_tiles * splits; unit += grid) {
    ASSERT_TRUE(schedule.next(&piece));
    const UnitCoord u = unit_coord(unit, n_tiles, m_tiles);
    EXPECT_EQ(piece.unit.n_tile, u.n_tile);
    EXPECT_EQ(piece.unit.m_tile, u.m_tile);
    EXPECT_EQ(piece.kb_begin, split_begin(k_blocks, splits, u.split));
    EXPECT_EQ(piece.kb_end, split_begin(k_blocks, splits, u.split + 1));
  }
  EXPECT_FALSE(schedule.next(&piece));
}

TEST(PrefillStreamK, CostModelWorkedExamples) {
  // H200, 132 SMs. l3-70b.gate_up at M = 64: 448 tiles of 128 k-blocks on 264 CTAs, 1.7 waves of
  // the split grid (256 k-blocks on the busiest CTAs) against 218 a Stream-K CTA.
  const TileChoice gate_up = choose_tiles(448, 64, 57344, 128, 132);
  EXPECT_EQ(gate_up.tokens, 64);
  EXPECT_TRUE(prefer_stream_k(448, 64, 57344, 128, 132, gate_up));
  // The same shape at M = 128 (wide tiles, one CTA an SM: 3.4 waves).
  EXPECT_TRUE(prefer_stream_k(448, 128, 57344, 128, 132, choose_tiles(448, 128, 57344, 128, 132)));
  // l3-70b.qkv at M = 128: 80 tiles x 3 splits, 1.8 waves of 43 k-blocks, against 78.
  EXPECT_TRUE(prefer_stream_k(80, 128, 10240, 128, 132, choose_tiles(80, 128, 10240, 128, 132)));
  // l3-70b.o at M = 64: 64 tiles x 4 splits fill 256 of 264 CTAs; nothing to take.
  EXPECT_FALSE(prefer_stream_k(64, 64, 8192, 128, 132, choose_tiles(64, 64, 8192, 128, 132)));
  // l3-8b.gate_up at M = 64: 224 tiles in one wave of 64 k-blocks against 55, which the slots'
  // traffic (11.5 us) outweighs (measured 1.21x the split grid's time).
  EXPECT_FALSE(prefer_stream_k(224, 64, 28672, 64, 132, choose_tiles(224, 64, 28672, 64, 132)));
  // Several m tiles: never (the panels' L2 sharing, stream_k.h).
  EXPECT_FALSE(prefer_stream_k(448, 1024, 57344, 128, 132,
                               choose_tiles(448, 1024, 57344, 128, 132)));
  // Too little work for runs of kMinBlocksPerSplit k-blocks.
  EXPECT_FALSE(stream_k_eligible(2, 1, 64, 132, 64));
  // The rules themselves, each at its edge. One m tile only: two are refused whatever the work.
  EXPECT_TRUE(stream_k_eligible(448, 1, 128, 132, 64));
  EXPECT_FALSE(stream_k_eligible(448, 2, 128, 132, 64));
  // Runs of kMinBlocksPerSplit on average: 132 CTAs (128 tokens: one an SM) x 4 = 528 iterations
  // are enough, 527 are not; 64 tokens hold two an SM, so 1056.
  EXPECT_TRUE(stream_k_eligible(33, 1, 16, 132, 128));
  EXPECT_FALSE(stream_k_eligible(31, 1, 17, 132, 128));
  EXPECT_TRUE(stream_k_eligible(66, 1, 16, 132, 64));
  EXPECT_FALSE(stream_k_eligible(33, 1, 16, 132, 64));
  // The flat iteration count in the kernel's 32-bit cursors: 2^31 - 1 fits, 2^31 does not.
  EXPECT_TRUE(stream_k_eligible(1, 1, 0x7fffffff, 132, 128));
  EXPECT_FALSE(stream_k_eligible(1, 1, int64_t(1) << 31, 132, 128));
  EXPECT_FALSE(stream_k_eligible(int64_t(1) << 16, 1, int64_t(1) << 15, 132, 128));
  EXPECT_EQ(stream_k_grid(100, 132, 128), 100);
  EXPECT_EQ(stream_k_grid(57344, 132, 64), 264);
}

}  // namespace
}  // namespace sailfish::prefill
