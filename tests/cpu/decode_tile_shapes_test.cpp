// The decode tiles (src/decode/tile_shapes.h), proven on the CPU: token tiles cover M, the
// stages and their shared memory fit the H200, and the stage's activation rows are laid out as
// the warp-split kernel's copies and ldmatrix expect.
#include <gtest/gtest.h>

#include <set>

#include "decode/tile_shapes.h"
#include "decode/warp_split_instances.h"

namespace sailfish::decode {
namespace {

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
  // Every M gets the fewest compiled tiles that hold it (so every edge, 8 / 9 through 48 / 49).
  for (int64_t m = 1; m <= 64; ++m) {
    int fewest = 0;
    for (int compiled : {8, 6, 4, 3, 2, 1}) {
      if (compiled * kTokensPerTile >= m) fewest = compiled;
    }
    EXPECT_EQ(token_tiles_for(m), fewest) << "M = " << m;
  }
}

TEST(DecodeConfig, SharedMemoryFitsHopper) {
  for (int bits : {4, 8}) {
    for (int tiles : {1, 2, 3, 4, 6, 8}) {
      EXPECT_LE(shared_bytes(bits, tiles), 227 * 1024);
      EXPECT_EQ(stage_bytes(bits, tiles) % 16, 0);
    }
  }
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

// The warp-split kernel's activation rows in a stage (warp_split_activation_offset), as its
// copies write them and its ldmatrix reads them (warp_split_kernel.cuh):
//   - copies: lane l, copy u writes chunk l % 8 of row l / 8 + 4u; over a CTA's tiles every
//     (row, chunk) lands in its own 16 bytes, inside the stage's activation rows;
//   - ldmatrix.x4 of tile t, chunk pair h: lane l supplies row 8t + l % 8 of chunk 4h + l / 8; each
//     phase of eight lanes (one 8 x 8 matrix) reads eight different bank groups (offset / 16 mod
//     8), so it is one conflict-free shared-memory wavefront;
//   - full tiles are read at tile 0's addresses plus 1 KB a tile (the kernel's immediate, v23).
TEST(DecodeConfig, WarpSplitActivationRowsMatchCopiesAndLdmatrix) {
  for (int bits : {4, 8}) {
    const int base = weight_stage_bytes(bits);
    for (int tiles = 1; tiles <= kWarpSplitMaxTiles; ++tiles) {
      const int rows = tiles * kTokensPerTile;
      std::set<int> written;
      for (int lane = 0; lane < 32; ++lane) {
        for (int u = 0; u < rows * 8 / 32; ++u) {
          const int offset = warp_split_activation_offset(bits, lane / 8 + 4 * u, lane & 7);
          EXPECT_EQ(offset % 16, 0);
          EXPECT_GE(offset, base);
          EXPECT_LT(offset, base + rows * 128);
          EXPECT_TRUE(written.insert(offset).second) << "lane " << lane << " copy " << u;
        }
      }
      EXPECT_EQ(written.size(), static_cast<size_t>(rows * 8));
      for (int t = 0; t < tiles; ++t) {
        for (int h = 0; h < 2; ++h) {
          for (int phase = 0; phase < 4; ++phase) {
            std::set<int> bank_groups;
            for (int lane = 8 * phase; lane < 8 * phase + 8; ++lane) {
              const int row = t * kTokensPerTile + (lane & 7), chunk = 4 * h + lane / 8;
              const int offset = warp_split_activation_offset(bits, row, chunk);
              EXPECT_EQ(written.count(offset), 1u);
              bank_groups.insert(offset / 16 % 8);
              EXPECT_EQ(offset, warp_split_activation_offset(bits, lane & 7, chunk) + 1024 * t);
            }
            EXPECT_EQ(bank_groups.size(), 8u)
                << "tile " << t << " pair " << h << " phase " << phase;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace sailfish::decode
