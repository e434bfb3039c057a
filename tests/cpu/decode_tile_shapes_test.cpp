// The decode tiles (src/decode/tile_shapes.h), proven on the CPU: token tiles cover M, and the
// stages and their shared memory fit the H200.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sailfish::decode
