// The cluster epilogue's push form (src/decode/cluster_epilogue.h), proven on the CPU: owners,
// slots and the receive area.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "decode/cluster_epilogue.h"

namespace sailfish::decode {
namespace {

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

}  // namespace
}  // namespace sailfish::decode
