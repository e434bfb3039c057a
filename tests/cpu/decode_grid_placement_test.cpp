// How a decode grid sits on the SMs (src/decode/grid_placement.h), proven on the CPU: the spread
// padding and when it pays.
#include <gtest/gtest.h>

#include "decode/cluster_epilogue.h"
#include "decode/grid_placement.h"

namespace sailfish::decode {
namespace {

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
  // Nor past what one CTA may ask for; up to it exactly is still a padding (an SM of
  // 2 x (227 KB + 1 KB) - 2 bytes: the least padding is 227 KB).
  EXPECT_EQ(spread_shared_bytes(1024, 1, 600 * 1024, kReserved), 0);
  EXPECT_EQ(spread_shared_bytes(1024, 1, 2 * (kMaxLaunchSharedBytes + kReserved) - 2, kReserved),
            kMaxLaunchSharedBytes);
  EXPECT_EQ(spread_shared_bytes(1024, 1, 2 * (kMaxLaunchSharedBytes + kReserved), kReserved), 0);
}

// The default rule: a share of two or more CTAs an SM, on a grid whose busiest SMs are more than
// half of them (132 SMs, as the H200), whatever the warps stream.
TEST(DecodeConfig, SpreadPaysOnEvenGridsOfTwoOrMoreAnSm) {
  constexpr int64_t kShort = 16 * 1024;
  EXPECT_TRUE(spread_pays(256, 132, kShort));   // l3-70b.o at M = 1: 124 SMs with two
  EXPECT_FALSE(spread_pays(192, 132, kShort));  // l3-8b.qkv at M = 1: 60 SMs with two, uneven
  EXPECT_FALSE(spread_pays(198, 132, kShort));  // 66 SMs with two: half, not more than half
  EXPECT_TRUE(spread_pays(199, 132, kShort));   // 67
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

}  // namespace
}  // namespace sailfish::decode
