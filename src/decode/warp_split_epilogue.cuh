// The warp-split kernel's epilogue (warp_split_kernel.cuh): how the warps' sums, and then the
// split CTAs' sums, are added in a fixed order and stored.
//   - cross_warp_sum_and_store: the split grid's CTA end, which calls the pieces below;
//   - park_sums / sum_parked_warps: every warp parks its sums in its own idle stages; fragment f
//     is added over the warps in warp order by warp f % warps (v20);
//   - cluster_reduce_and_store: Epilogue::kCluster, barrier form: every rank reads the others'
//     parked sums through distributed shared memory between two cluster barriers;
//   - cluster_push_and_store: Epilogue::kCluster, push form (v21, v22): each rank sends its sums
//     of a fragment to the fragment's owner rank, which adds and stores;
//   - stream_k_reduce_and_store: the Stream-K grid's shared tiles (v18).
// Every form adds the same values in the same order as the reduce kernel: 0 + s_0 + s_1 + ...
#pragma once

#include <cstdint>

#include "common/ptx/cluster.cuh"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/mbarrier.cuh"
#include "decode/config.h"
#include "decode/decode_kernel.cuh"

namespace sailfish::decode::detail {

// A warp's sums parked in shared memory for another warp or CTA to add, laid out
// [j][tt][i][lane] so the 32 lanes touch 32 consecutive words: element i of fragment
// f = j * kTiles + tt of a lane is word parked_word(f, i, lane).
__device__ __forceinline__ constexpr int parked_word(int fragment, int i, int lane) {
  return (fragment * 4 + i) * 32 + lane;
}

// f(j, tt, i, word) for every sum of a lane: element i of fragment (j, tt) and its parked word.
template <int kTiles, typename F>
__device__ __forceinline__ void for_each_parked_sum(int lane, F&& f) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
#pragma unroll
    for (int tt = 0; tt < kTiles; ++tt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) f(j, tt, i, parked_word(j * kTiles + tt, i, lane));
    }
  }
}

template <int kTiles>
__device__ __forceinline__ void park_sums(float* parked, const float (&total)[4][kTiles][4],
                                          int lane) {
  for_each_parked_sum<kTiles>(
      lane, [&](int j, int tt, int i, int word) { parked[word] = total[j][tt][i]; });
}

// The CTA's sum of fragment f = j * kTiles + tt, added over its kWarpCount warps in warp order
// from their sums parked by park_sums in their own regions (warp w's at smem + w * region_bytes).
template <int kTiles, int kWarpCount>
__device__ __forceinline__ void sum_parked_warps(const uint8_t* smem, int region_bytes, int f,
                                                 int lane, float (&sum)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    sum[i] = reinterpret_cast<const float*>(smem)[parked_word(f, i, lane)];
  }
#pragma unroll
  for (int w = 1; w < kWarpCount; ++w) {
    const float* parked = reinterpret_cast<const float*>(smem + w * region_bytes);
#pragma unroll
    for (int i = 0; i < 4; ++i) sum[i] += parked[parked_word(f, i, lane)];
  }
}

// Epilogue::kCluster: the split CTAs of one strip (cluster rank = split) add their sums in split
// order through distributed shared memory and store Y + bias. Each CTA's sums (after the
// cross-warp add) are parked in warp 0's region as [j][tt][i][lane]. After one cluster barrier,
// fragment (j, tt) is summed by warp w of rank r where j * kTiles + tt = r + splits * (w +
// kWarpCount * q): 0 + s_0 + s_1 + ... in split order, the reduce kernel's order, then
// store_fragment adds the bias. A second barrier keeps every CTA resident until the last remote
// read.
template <typename T, int kTiles, int kWarpCount, bool kMoe = false>
__device__ __forceinline__ void cluster_reduce_and_store(const DecodeParams& p, uint8_t* smem,
                                                         int strip, int token0, int split, int warp,
                                                         int lane) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  float* parked = reinterpret_cast<float*>(smem);  // warp 0's region
  gpu::cluster_sync();
  const uint32_t parked_address = gpu::shared_address(parked);
  for (int f = split + p.splits * warp; f < 4 * kTiles; f += p.splits * kWarpCount) {
    float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < kMaxClusterSplits; ++r) {
      if (r < p.splits) {
        const uint32_t remote = gpu::map_shared_to_rank(parked_address, r);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          sum[i] += gpu::load_shared_cluster(remote + parked_word(f, i, lane) * 4);
        }
      }
    }
    const int j = f / kTiles, tt = f % kTiles;
    store_fragment<T, kMoe>(p, sum, strip * 64 + j * 16, token0 + tt * kTokensPerTile, lane, 0);
  }
  gpu::cluster_sync();
#else
  __trap();  // plan_decode picks kCluster only where this code was compiled for sm_90 or later
#endif
}

// Epilogue::kCluster, push form (v21; spread over the ranks in v22; DecodeParams::cluster_push):
// the same sums as cluster_reduce_and_store, in the same order, without cluster barriers. `sums`
// holds the CTA's sums of the warp's fragments f = warp + kWarpCount * q < 4 kTiles (after the
// cross-warp add). Each fragment has an owner rank (cluster_epilogue.h: cluster_push_owner; rank 0
// at 2 ranks, rank f % splits from 3): every other rank sends its sums of f into the owner's
// receive area with st.async, which completes bytes on the owner's mbarrier; the owner waits for
// them, adds 0 + s_0 + s_1 + ... and stores. A rank exits once its sends are issued and its own
// fragments stored. The barrier form has every rank meet at a cluster barrier, read the others'
// sums and meet at a second barrier before exiting, on the critical path of every small layer
// (~1 us of 5 on l3-8b.o at M = 1). Each owner's barrier was initialized at the kernel's start and
// made visible by cluster_arrive_relaxed(); cluster_wait() here pairs with it.
template <typename T, int kTiles, int kWarpCount, bool kMoe = false>
__device__ __forceinline__ void cluster_push_and_store(
    const DecodeParams& p,
    const float (&sums)[warp_split_fragments_per_warp(kTiles, kWarpCount)][4], uint8_t* receive,
    int strip, int token0, int split, int warp, int lane) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kWarpFragments = warp_split_fragments_per_warp(kTiles, kWarpCount);
  constexpr bool kSomeWarpsIdle = warp_split_some_warps_idle(kTiles, kWarpCount);
  const int splits = p.splits;
  const uint32_t receive_address = gpu::shared_address(receive);
  const uint32_t barrier = receive_address + cluster_receive_slot_bytes(splits, kTiles);
  gpu::cluster_wait();
  if (splits == 2) {
    // Rank 0 owns every fragment, in slot f (cluster_epilogue.h). The general code below does the
    // same, but its owner and slot arithmetic sits between the mainloop's last add and the send: it
    // ran 1.02-1.05x the time of this v21 form on the 2-rank rows (v22c, docs/perf/decode.md).
    if (split != 0) {
      const uint32_t remote_barrier = gpu::map_shared_to_rank(barrier, 0);
      const uint32_t slots = gpu::map_shared_to_rank(receive_address + lane * 16, 0);
#pragma unroll
      for (int q = 0; q < kWarpFragments; ++q) {
        const int f = warp + kWarpCount * q;
        if (kSomeWarpsIdle && f >= 4 * kTiles) break;
        gpu::store_async_to_rank(slots + f * kClusterFragmentBytes, sums[q], remote_barrier);
      }
      return;
    }
    if (threadIdx.x == 0) {
      gpu::mbarrier_arrive_expect_tx(barrier, 4 * kTiles * kClusterFragmentBytes);
    }
    if (kSomeWarpsIdle && warp >= 4 * kTiles) return;  // a warp with no fragment
    gpu::mbarrier_wait_cluster(barrier, 0);
#pragma unroll
    for (int q = 0; q < kWarpFragments; ++q) {
      const int f = warp + kWarpCount * q;
      if (kSomeWarpsIdle && f >= 4 * kTiles) break;
      const float4 other =
          *reinterpret_cast<const float4*>(receive + f * kClusterFragmentBytes + lane * 16);
      const float sum[4] = {0.0f + sums[q][0] + other.x, 0.0f + sums[q][1] + other.y,
                            0.0f + sums[q][2] + other.z, 0.0f + sums[q][3] + other.w};
      store_fragment<T, kMoe>(p, sum, strip * 64 + (f / kTiles) * 16,
                              token0 + (f % kTiles) * kTokensPerTile, lane, 0);
    }
    return;
  }
  bool owns_any = false;  // whether this warp holds a fragment this rank owns
#pragma unroll
  for (int q = 0; q < kWarpFragments; ++q) {
    const int f = warp + kWarpCount * q;
    if (kSomeWarpsIdle && f >= 4 * kTiles) break;
    const int owner = cluster_push_owner(f, splits);
    if (owner == split) {
      owns_any = true;
      continue;
    }
    const uint32_t slot = gpu::map_shared_to_rank(
        receive_address + cluster_push_slot(f, split, splits) * kClusterFragmentBytes + lane * 16,
        owner);
    gpu::store_async_to_rank(slot, sums[q], gpu::map_shared_to_rank(barrier, owner));
  }
  const int owned = cluster_push_owned(split, splits, kTiles);
  if (owned == 0) return;
  if (threadIdx.x == 0) {
    gpu::mbarrier_arrive_expect_tx(barrier, owned * (splits - 1) * kClusterFragmentBytes);
  }
  if (!owns_any) return;
  gpu::mbarrier_wait_cluster(barrier, 0);
#pragma unroll
  for (int q = 0; q < kWarpFragments; ++q) {
    const int f = warp + kWarpCount * q;
    if (kSomeWarpsIdle && f >= 4 * kTiles) break;
    if (cluster_push_owner(f, splits) != split) continue;
    // The senders' slots of f, in rank order with this rank left out: consecutive from here.
    const float* slots = reinterpret_cast<const float*>(
        receive + cluster_push_index(f, splits) * (splits - 1) * kClusterFragmentBytes +
        lane * 16);
    float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int r = 0; r < splits; ++r) {
      float4 s;
      if (r == split) {
        s = make_float4(sums[q][0], sums[q][1], sums[q][2], sums[q][3]);
      } else {
        s = *reinterpret_cast<const float4*>(slots);
        slots += kClusterFragmentBytes / 4;
      }
      sum[0] += s.x;
      sum[1] += s.y;
      sum[2] += s.z;
      sum[3] += s.w;
    }
    store_fragment<T, kMoe>(p, sum, strip * 64 + (f / kTiles) * 16,
                            token0 + (f % kTiles) * kTokensPerTile, lane, 0);
  }
#else
  __trap();  // plan_decode picks kCluster only where this code was compiled for sm_90 or later
#endif
}

// Stream-K (kStreamK; four warps a CTA): after one cluster barrier, the tiles of the cluster's
// strips that several runs share are summed over those runs in unit order (0 + first run + ...:
// deterministic) and stored with the bias. Fragment f of tile t is item t * 4 kTiles + f, taken by
// the cluster's warps in turn. A run's sums of tile t sit in its slot 0 (past the CTA's stage
// regions) if it reached the tile's end, else in slot 1 (its own region's start): stream_k_grid.h,
// stream_k_parked_at_tile_end. A second barrier keeps every CTA resident until the last remote
// read.
// The end of the split grid's CTA (warp_split_kernel.cuh). Every warp parks its sums in its own
// (now idle) stage region `region`; fragment f is then added over the warps in warp order by warp
// f % kWarpCount (sum_parked_warps), which stores it, or hands it to the cluster epilogue: parked
// in place in warp 0's region (only warp f % kWarpCount touches fragment f's words) or, in the
// push form, kept in registers. Until v20, warp 0 added and stored every fragment while the other
// warps waited: at 2 token tiles ~450 instructions on one warp, 40% of the stall samples of a
// launch with one block a warp (docs/perf/decode.md). The sums and their order are unchanged, so
// the results are bitwise those of v18. clustered and push are uniform over the cluster: every
// thread takes part in its barriers.
template <typename T, int kTiles, int kWarpCount, bool kMoe, bool kPushBuilt>
__device__ __forceinline__ void cross_warp_sum_and_store(const DecodeParams& p, uint8_t* smem,
                                                         uint8_t* region, int region_bytes,
                                                         const float (&total)[4][kTiles][4],
                                                         int strip, int token0, int split, int warp,
                                                         int lane, bool clustered, bool push) {
  __syncthreads();  // every warp's copies have landed and no warp still reads its stages
  park_sums<kTiles>(reinterpret_cast<float*>(region), total, lane);
  __syncthreads();
  // The CTA's sums of fragments warp + kWarpCount * q, of the 4 * kTiles (with 8 warps at one
  // token tile, warps 4-7 hold none).
  constexpr int kWarpFragments = warp_split_fragments_per_warp(kTiles, kWarpCount);
  float sums[kWarpFragments][4];
#pragma unroll
  for (int q = 0; q < kWarpFragments; ++q) {
    const int f = warp + kWarpCount * q;
    // Uniform; compiled only where the fragments do not divide evenly over the warps (ptxas
    // cannot bound `warp`, and the test alone moved the four-warp main loops by up to 3%).
    if (warp_split_some_warps_idle(kTiles, kWarpCount) && f >= 4 * kTiles) break;
    sum_parked_warps<kTiles, kWarpCount>(smem, region_bytes, f, lane, sums[q]);
    if (!clustered) {
      store_fragment<T, kMoe>(p, sums[q], strip * 64 + (f / kTiles) * 16,
                              token0 + (f % kTiles) * kTokensPerTile, lane, split);
    } else if (!push) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        reinterpret_cast<float*>(smem)[parked_word(f, i, lane)] = sums[q][i];
      }
    }
  }
  if (!clustered) return;
  // Uniform: every thread takes part in the cluster barriers.
  if constexpr (kPushBuilt) {
    if (push) {
      cluster_push_and_store<T, kTiles, kWarpCount, kMoe>(p, sums, smem + kWarpCount * region_bytes,
                                                          strip, token0, split, warp, lane);
      return;
    }
  }
  cluster_reduce_and_store<T, kTiles, kWarpCount, kMoe>(p, smem, strip, token0, split, warp, lane);
}

template <typename T, int kTiles>
__device__ __forceinline__ void stream_k_reduce_and_store(const DecodeParams& p, uint8_t* smem,
                                                          int region_bytes, int token0, int warp,
                                                          int lane) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kFragments = 4 * kTiles;
  gpu::cluster_sync();
  const int cluster = blockIdx.x, rank = blockIdx.y;
  const int runs = p.splits * kWarpSplitWarps;
  const int strips = stream_k_cluster_strips(p.n_pad / 64, p.stream_k_strips, cluster);
  const uint32_t units = static_cast<uint32_t>(strips) * p.k_blocks;
  const uint32_t smem_address = gpu::shared_address(smem);
  const uint32_t slot0_address = smem_address + kWarpSplitWarps * region_bytes;
  for (int item = rank * kWarpSplitWarps + warp; item < strips * kFragments; item += runs) {
    const int t = item / kFragments, f = item % kFragments;
    const uint32_t tile_begin = static_cast<uint32_t>(t) * p.k_blocks;
    const uint32_t tile_end = tile_begin + p.k_blocks;
    // The runs that cover part of the tile, in unit order.
    const int first = static_cast<int>(stream_k_run_of(units, runs, tile_begin));
    const int last = static_cast<int>(stream_k_run_of(units, runs, tile_end - 1));
    if (first == last) continue;  // one run covered it and stored it
    float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    uint32_t e = stream_k_run_begin(units, runs, first);
    for (int r = first; r <= last; ++r) {
      const uint32_t b = e;
      e = stream_k_run_begin(units, runs, r + 1);
      if (b == e) continue;  // an empty run parks nothing
      const int w = r % kWarpSplitWarps;
      const uint32_t local = stream_k_parked_at_tile_end(e, tile_end)
                                 ? slot0_address + w * stream_k_park_bytes(kTiles)
                                 : smem_address + w * region_bytes;
      const uint32_t remote = gpu::map_shared_to_rank(local, r / kWarpSplitWarps);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        sum[i] += gpu::load_shared_cluster(remote + parked_word(f, i, lane) * 4);
      }
    }
    const int j = f / kTiles, tt = f % kTiles;
    store_fragment<T>(p, sum, (cluster * p.stream_k_strips + t) * 64 + j * 16,
                      token0 + tt * kTokensPerTile, lane, 0);
  }
  gpu::cluster_sync();
#else
  __trap();  // plan_decode plans Stream-K only where this code was compiled for sm_90 or later
#endif
}

}  // namespace sailfish::decode::detail
