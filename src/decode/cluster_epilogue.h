// How partial sums leave a CTA (the Epilogue kinds), and the cluster epilogue's push form: which
// rank owns each fragment, where a sender's sums land in the owner's receive area and what that
// area adds to a CTA's shared memory. The kernel's epilogue and the plan share these.
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "decode/tile_shapes.h"
#include "decode/warp_split_instances.h"

namespace sailfish::decode {

// How partial sums leave a CTA.
enum class Epilogue : int {
  kStore = 0,     // one split: Y = acc + bias, plain stores
  kAtomic = 1,    // several splits, opt-in: red.global.add into Y, which prep set to the bias
  kPartials = 2,  // several splits: fp32 partials, summed in split order by a reduce kernel
  // Several splits (default where it fits, warp-split kernel, sm_90): the split CTAs of a strip
  // form one thread-block cluster and add their partial tiles in split order through distributed
  // shared memory, then store Y + bias: every rank reads the others' after a cluster barrier, or
  // (the push form, DecodeParams::cluster_push) each rank sends its sums of a fragment to the
  // fragment's owner rank, which adds and stores. The same sums in the same order as kPartials
  // (bitwise identical), with no workspace and no second launch.
  kCluster = 3,
};
// The most split CTAs one cluster holds (the portable cluster size); deeper splits use kPartials.
constexpr int kMaxClusterSplits = 8;
// Epilogue::kCluster by push (v21, spread over the ranks in v22; DecodeParams::cluster_push,
// split grid, 1-2 token tiles): each fragment f of the CTA tile (4 n16 fragments a token tile)
// has an owner rank; every other rank sends its sums of f into the owner's shared memory, and the
// owner adds them in split order and stores. A rank that owns nothing exits once its sends are
// issued, which frees its SM for the next layer's CTAs (programmatic dependent launch).
// - 2 ranks: rank 0 owns every fragment (v21), with the kernel's own short path for it.
//   Dealing the fragments over both ranks made no measurable difference, but the general
//   path's owner and slot arithmetic, between the mainloop's last add and the send, ran
//   1.02-1.05x the v21 form on the 2-rank rows (v22a-c, docs/perf/decode.md).
// - 3-8 ranks: fragment f belongs to rank f % splits (v22). With rank 0 owning all, one SM took
//   (splits - 1) x 2 KB a token tile of incoming sums and every add: 1.02-1.09x the barrier form
//   at 3-7 ranks (v21); dealt out, 0.93-0.98x.
// A rank's receive area lies past the warps' regions: [owned fragment][sender][lane] x 16 bytes
// (cluster_push_slot), then the 8-byte mbarrier the sends complete on (16 bytes kept for
// alignment). Every CTA of the launch gets the area of the busiest owner; the plan takes the
// push form only where it leaves the grid's clusters resident at once (launch.cu,
// choose_cluster_push).
constexpr int kClusterPushMaxTiles = 2;
constexpr int kClusterFragmentBytes = 32 * 16;  // one n16 fragment of one token tile, all lanes
constexpr int kClusterBarrierBytes = 16;
// The ranks that own fragments: 0 .. owners - 1. The functions below run in the kernel's
// epilogue on its critical path with a run-time split count, so they avoid integer division
// (~20 dependent instructions each: with nine of them l3-8b.o ran 1.05x at M = 1 and l3-8b.down
// gained 1% instead of 7%, v22b): a tile has at most 8 fragments, less than 3 x owners whenever
// owners > 1.
SF_HOST_DEVICE constexpr int cluster_push_owners(int splits) { return splits == 2 ? 1 : splits; }
static_assert(4 * kClusterPushMaxTiles < 3 * 3, "fragment / owners is 0, 1 or 2 from 3 ranks");
// Fragment f's place among its owner's fragments: f / owners.
SF_HOST_DEVICE constexpr int cluster_push_index(int fragment, int splits) {
  return cluster_push_owners(splits) == 1
             ? fragment
             : (fragment >= splits ? 1 : 0) + (fragment >= 2 * splits ? 1 : 0);
}
// Fragment f's owner: f % owners.
SF_HOST_DEVICE constexpr int cluster_push_owner(int fragment, int splits) {
  return fragment - cluster_push_index(fragment, splits) * cluster_push_owners(splits);
}
// Fragments rank `rank` owns: f = rank, rank + owners, ... below 4 x token_tiles.
SF_HOST_DEVICE constexpr int cluster_push_owned(int rank, int splits, int token_tiles) {
  const int fragments = 4 * token_tiles;
  return cluster_push_owners(splits) == 1
             ? (rank == 0 ? fragments : 0)
             : (rank < fragments ? 1 : 0) + (rank + splits < fragments ? 1 : 0) +
                   (rank + 2 * splits < fragments ? 1 : 0);
}
// The slot, in the owner's receive area, of sender `sender`'s sums of fragment f (sender !=
// owner): the owner's cluster_push_index-th fragment, senders in rank order with the owner left
// out.
SF_HOST_DEVICE constexpr int cluster_push_slot(int fragment, int sender, int splits) {
  return cluster_push_index(fragment, splits) * (splits - 1) +
         (sender < cluster_push_owner(fragment, splits) ? sender : sender - 1);
}
SF_HOST_DEVICE constexpr int cluster_receive_slot_bytes(int splits, int token_tiles) {
  return cluster_push_owned(0, splits, token_tiles) * (splits - 1) * kClusterFragmentBytes;
}
SF_HOST_DEVICE constexpr int cluster_receive_bytes(int splits, int token_tiles) {
  return cluster_receive_slot_bytes(splits, token_tiles) + kClusterBarrierBytes;
}
// The largest receive area over the cluster sizes 2 .. kMaxClusterSplits.
SF_HOST_DEVICE constexpr int cluster_receive_max_bytes(int token_tiles) {
  int most = 0;
  for (int splits = 2; splits <= kMaxClusterSplits; ++splits) {
    most = cluster_receive_bytes(splits, token_tiles) > most
               ? cluster_receive_bytes(splits, token_tiles)
               : most;
  }
  return most;
}
static_assert(warp_split_max_shared_bytes(4, 2, warp_split_deep_stages(2)) +
                          cluster_receive_max_bytes(2) <=
                      227 * 1024 &&
                  warp_split_max_shared_bytes(8, 1, warp_split_deep_stages(1)) +
                          cluster_receive_max_bytes(1) <=
                      227 * 1024 &&
                  warp_split_max_shared_bytes(8, 1, kStages, kWarpSplitWideWarps) +
                          cluster_receive_max_bytes(1) <=
                      227 * 1024,
              "the push form's largest CTAs still fit an SM with the receive area");

}  // namespace sailfish::decode
