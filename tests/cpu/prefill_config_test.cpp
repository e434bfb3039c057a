// Prefill-tier partition math (src/prefill/config.h), proven on the CPU: the work-unit order
// visits every (n tile, m tile, split) exactly once, the split heuristic stays in its bounds,
// and the shared-memory formula fits the H200 with 1024-byte aligned activation tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "prefill/config.h"

namespace sailfish::prefill {
namespace {

TEST(PrefillConfig, UnitOrderVisitsEveryTileOnce) {
  for (int n_tiles : {1, 3, 16, 17, 40, 224}) {
    for (int m_tiles : {1, 2, 5, 32}) {
      for (int splits : {1, 3}) {
        const int64_t units = int64_t(n_tiles) * m_tiles * splits;
        std::vector<int> hits(static_cast<size_t>(units), 0);
        for (int64_t unit = 0; unit < units; ++unit) {
          const UnitCoord u = unit_coord(unit, n_tiles, m_tiles);
          ASSERT_GE(u.n_tile, 0);
          ASSERT_LT(u.n_tile, n_tiles);
          ASSERT_GE(u.m_tile, 0);
          ASSERT_LT(u.m_tile, m_tiles);
          ASSERT_GE(u.split, 0);
          ASSERT_LT(u.split, splits);
          ++hits[static_cast<size_t>((int64_t(u.split) * m_tiles + u.m_tile) * n_tiles + u.n_tile)];
        }
        for (int h : hits) ASSERT_EQ(h, 1) << n_tiles << " x " << m_tiles << " x " << splits;
      }
    }
  }
}

TEST(PrefillConfig, ConsecutiveUnitsShareAPanel) {
  // 40 n tiles, 8 m tiles: the first 16 * 8 units stay in n tiles 0-15 (one panel's weights).
  for (int64_t unit = 0; unit < 16 * 8; ++unit) {
    EXPECT_LT(unit_coord(unit, 40, 8).n_tile, 16);
  }
  // The last, narrower panel (tiles 32-39) is covered too.
  EXPECT_EQ(unit_coord(32 * 8, 40, 8).n_tile, 32);
  EXPECT_EQ(unit_coord(40 * 8 - 1, 40, 8).n_tile, 39);
  EXPECT_EQ(unit_coord(40 * 8 - 1, 40, 8).m_tile, 7);
}

TEST(PrefillConfig, KRotationStaysInRangeAndSpreads) {
  for (int count : {1, 2, 9, 64, 448}) {
    for (int n_tile = 0; n_tile < 40; ++n_tile) {
      for (int m_tile = 0; m_tile < 8; ++m_tile) {
        const int r = k_rotation(UnitCoord{n_tile, m_tile, 0}, count);
        ASSERT_GE(r, 0);
        ASSERT_LT(r, count);
      }
    }
  }
  EXPECT_EQ(k_rotation(UnitCoord{0, 0, 0}, 0), 0);
  // Neighbouring tiles of one m tile start at different k-blocks.
  EXPECT_NE(k_rotation(UnitCoord{0, 0, 0}, 64), k_rotation(UnitCoord{1, 0, 0}, 64));
}

TEST(PrefillConfig, TileChoiceWorkedExamples) {
  // The worked examples in config.h (H200, 132 SMs): n_tiles = N / 128, k_blocks = K / 64.
  const TileChoice o128 = choose_tiles(32, 128, 4096, 64, 132);  // l3-8b.o, M = 128
  EXPECT_EQ(o128.tokens, 128);
  EXPECT_EQ(o128.splits, 4);
  const TileChoice qkv128 = choose_tiles(48, 128, 6144, 64, 132);  // l3-8b.qkv
  EXPECT_EQ(qkv128.tokens, 128);
  EXPECT_EQ(qkv128.splits, 2);
  const TileChoice qkv70 = choose_tiles(80, 128, 10240, 128, 132);  // l3-70b.qkv
  EXPECT_EQ(qkv70.tokens, 128);
  EXPECT_EQ(qkv70.splits, 3);
  for (int64_t m : {1024, 4096, 8192}) {
    const TileChoice big = choose_tiles(32, m, 4096, 64, 132);
    EXPECT_EQ(big.tokens, 256) << m;
    EXPECT_EQ(big.splits, 1) << m;
  }
}

// The cost model's terms, as config.h states them: waves of sm_count x ctas_per_sm units, a
// split's k-blocks at the width's step time, and 8 bytes per output per split at 3 TB/s.
TEST(PrefillConfig, EstimateIsWavesTimesStepsPlusPartials) {
  // l3-8b.o at M = 128, 128-token tiles, 4 splits: 128 units in one wave of 132, 16 k-blocks of
  // 500 ns, partials 4 x 128 x 4096 x 8 bytes.
  EXPECT_DOUBLE_EQ(estimate_ns(32, 128, 4096, 64, 132, 128, 4),
                   16 * 500.0 + 4.0 * 128 * 4096 * 8 / 3000.0);
  // Unsplit: no partials. 256-token tiles at M = 1024: 4 x 32 = 128 units, 64 steps of 720 ns.
  EXPECT_DOUBLE_EQ(estimate_ns(32, 1024, 4096, 64, 132, 256, 1), 64 * 720.0);
  // 16-64 tokens hold two CTAs an SM (264 slots): 300 units of 16 tokens are two waves of 580 ns
  // steps; 32 tokens 600 ns, 64 tokens 650 ns in one wave of 264.
  EXPECT_DOUBLE_EQ(estimate_ns(300, 16, 300 * 128, 64, 132, 16, 1), 2 * 64 * 580.0);
  EXPECT_DOUBLE_EQ(estimate_ns(264, 32, 264 * 128, 64, 132, 32, 1), 64 * 600.0);
  EXPECT_DOUBLE_EQ(estimate_ns(264, 64, 264 * 128, 64, 132, 64, 1), 64 * 650.0);
  // Uneven splits round the steps up: 65 k-blocks in 2 splits are 33 steps.
  EXPECT_DOUBLE_EQ(estimate_ns(10, 128, 1280, 65, 132, 128, 2),
                   33 * 500.0 + 2.0 * 128 * 1280 * 8 / 3000.0);
}

TEST(PrefillConfig, TileChoiceStaysInBounds) {
  for (int64_t n_tiles : {1, 2, 7, 33, 131, 132, 500}) {
    for (int64_t k_blocks : {1, 3, 8, 9, 64, 448}) {
      // 32, 64 and 128 are the half-empty edges of the 64-, 128- and 256-token tiles.
      for (int64_t m : {1, 32, 33, 64, 65, 128, 129, 700, 5000}) {
        const TileChoice c = choose_tiles(n_tiles, m, n_tiles * 128, k_blocks, 132);
        EXPECT_TRUE(is_token_width(c.tokens)) << c.tokens;
        // Never a tile at least half empty, except the narrowest.
        if (c.tokens > kMinTokens) EXPECT_GT(m, c.tokens / 2) << c.tokens;
        EXPECT_GE(c.splits, 1);
        EXPECT_LE(c.splits, kMaxSplits);
        if (c.splits > 1) EXPECT_GE(k_blocks / c.splits, kMinBlocksPerSplit);
        // The choice is never estimated slower than any unsplit tiling it was allowed.
        for (int tokens = kMinTokens; tokens <= kMaxTokens; tokens *= 2) {
          if (tokens > kMinTokens && m <= tokens / 2) continue;
          EXPECT_LE(estimate_ns(n_tiles, m, n_tiles * 128, k_blocks, 132, c.tokens, c.splits),
                    estimate_ns(n_tiles, m, n_tiles * 128, k_blocks, 132, tokens, 1));
        }
        // A forced width is kept, with the split the model picks for it.
        for (int tokens = kMinTokens; tokens <= kMaxTokens; tokens *= 2) {
          const TileChoice f = choose_tiles(n_tiles, m, n_tiles * 128, k_blocks, 132, tokens);
          EXPECT_EQ(f.tokens, tokens);
          EXPECT_GE(f.splits, 1);
          EXPECT_LE(f.splits, kMaxSplits);
        }
      }
    }
  }
}

// Two tilings can be estimated exactly alike; the narrower tile, tried first, keeps the tie (it
// pads M to no more rows of zeros). N 1024, K 2304, M 96 on the H200: 8 splits of three 32-token
// tiles and 6 of one 128-token tile each run one wave of 3000 ns (5 x 600, 6 x 500) and write
// the partials of 768 padded rows, and nothing is cheaper. A `<=` for `<`, or the widths tried
// widest first, picks 128 tokens.
TEST(PrefillConfig, TileChoiceTieGoesToTheNarrowerTile) {
  const int64_t n_tiles = 8, m = 96, n_pad = 1024, k_blocks = 36;
  const double tied = estimate_ns(n_tiles, m, n_pad, k_blocks, 132, 32, 8);
  ASSERT_EQ(tied, estimate_ns(n_tiles, m, n_pad, k_blocks, 132, 128, 6));
  for (int tokens = kMinTokens; tokens <= kMaxTokens; tokens *= 2) {
    if (tokens > kMinTokens && m <= tokens / 2) continue;
    for (int splits = 1; splits <= kMaxSplits; ++splits) {
      if (splits > 1 && k_blocks / splits < kMinBlocksPerSplit) break;
      EXPECT_GE(estimate_ns(n_tiles, m, n_pad, k_blocks, 132, tokens, splits), tied)
          << tokens << " tokens, " << splits << " splits";
    }
  }
  const TileChoice c = choose_tiles(n_tiles, m, n_pad, k_blocks, 132);
  EXPECT_EQ(c.tokens, 32);
  EXPECT_EQ(c.splits, 8);
}

// The split limits are inclusive: splits of kMinBlocksPerSplit k-blocks (k_blocks / splits, as
// the model rounds), and kMaxSplits of them, are allowed. One 16-token tile (one CTA on 132 SMs)
// takes every split it may have.
TEST(PrefillConfig, TileChoiceSplitLimitsAreInclusive) {
  EXPECT_EQ(choose_tiles(1, 16, 128, 8, 132).splits, 2);  // 8 / 2 = 4 k-blocks a split
  EXPECT_EQ(choose_tiles(1, 16, 128, 7, 132).splits, 1);  // 7 / 2 = 3
  EXPECT_EQ(choose_tiles(1, 16, 128, 64, 132).splits, kMaxSplits);
}

TEST(PrefillConfig, StagesFitAndStayAligned) {
  for (int bits : {4, 8}) {
    for (int tokens = kMinTokens; tokens <= kMaxTokens; tokens *= 2) {
      for (bool zero : {false, true}) {
        SCOPED_TRACE(::testing::Message() << bits << " bits, " << tokens << " tokens, zero points "
                                          << zero);
        EXPECT_EQ(stage_bytes(bits, tokens, zero) % 1024, 0)
            << "the 128-byte swizzle needs 1 KB tiles";
        EXPECT_GE(stage_count(bits, tokens, zero), 4);
        // Default depth: as many stages as fit, at most 8.
        EXPECT_EQ(stage_count(bits, tokens, zero), std::min(max_stages(bits, tokens, zero), 8));
        EXPECT_GE(max_stages(bits, tokens, zero), kMinStages);
        // Every CTA that shares an SM fits with its runtime reserve (1 KB) in the SM's 228 KB.
        const int budget = cta_shared_budget(tokens);
        EXPECT_LE(budget, 227 * 1024);
        EXPECT_LE(ctas_per_sm(tokens) * (budget + 1024), 228 * 1024) << tokens;
        EXPECT_LE(shared_bytes(bits, tokens, stage_count(bits, tokens, zero), zero), budget);
        EXPECT_LE(shared_bytes(bits, tokens, max_stages(bits, tokens, zero), zero), budget);
        // The deepest pipeline is the barrier area's limit or the last one that fits.
        if (max_stages(bits, tokens, zero) < kMaxStages) {
          EXPECT_GT(shared_bytes(bits, tokens, max_stages(bits, tokens, zero) + 1, zero), budget);
        }
      }
      // Zero shifts and folds take room; symmetric weights keep the stage of format version 1.
      EXPECT_EQ(stage_bytes(bits, tokens, true), stage_bytes(bits, tokens, false) + 1024);
      EXPECT_EQ(stage_bytes(bits, tokens, false),
                tokens * 128 + kConsumers * (64 * 64 * bits / 8) + kConsumers * 1024);
    }
  }
}

// Two CTAs per SM only where the accumulators fit the smaller register budget (config.h): the
// narrow tiles, with the compact 288-thread layout and two fragment sets.
TEST(PrefillConfig, CtasPerSmFollowTheTileWidth) {
  for (int tokens = kMinTokens; tokens <= kMaxTokens; tokens *= 2) {
    if (tokens <= 64) {
      EXPECT_EQ(ctas_per_sm(tokens), 2);
      EXPECT_EQ(cta_threads(tokens), 288);
      EXPECT_EQ(fragment_sets(tokens), 2);
    } else {
      EXPECT_EQ(ctas_per_sm(tokens), 1);
      EXPECT_EQ(cta_threads(tokens), 384);
      EXPECT_EQ(fragment_sets(tokens), 3);
    }
    EXPECT_LE(cta_threads(tokens) * ctas_per_sm(tokens), 2048);
  }
}

}  // namespace
}  // namespace sailfish::prefill
