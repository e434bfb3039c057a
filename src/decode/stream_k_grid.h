// Stream-K within clusters (opt-in): the flat units a cluster's warps walk, the run arithmetic
// the kernel does in 32 bits, where partial tiles park, and the grid stream_k_plan picks.
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "decode/cluster_epilogue.h"
#include "decode/grid_placement.h"
#include "decode/split_depth.h"

namespace sailfish::decode {

// Stream-K within clusters (the warp-split kernel at 1-2 token tiles, int4, sm_90; plan_decode).
// A split grid gives every strip the same number of CTAs, so the CTAs per SM come in whole
// strips' worth: l3-8b.qkv (96 strips of 64 k-blocks, 2 splits) puts two CTAs, 64 blocks, on 60
// of the H200's 132 SMs and one on the rest, where an even share is 46.5. Stream-K evens it out:
// cluster q of C CTAs owns the S strips [q S, min((q + 1) S, n_blocks)), the flat units
// u = strip_in_cluster * k_blocks + kb of those strips are cut into 4 C contiguous runs of equal
// length, and warp w of cluster rank r walks run r * 4 + w, strip boundaries included, with one
// unbroken pipeline (the codes are strip-major, so its weight stream is one contiguous range). A
// warp stores a tile it covered whole; the partial tiles at its run's ends meet in the cluster
// through distributed shared memory, summed in unit order (deterministic), after one cluster
// barrier. l3-8b.qkv at S = 3, C = 8: 256 CTAs of 24 blocks, two on each busy SM (48 blocks).
// Measured on the H200 (v18, docs/perf/decode.md) it ran 1.02-1.75x the split grid's time on every
// Llama-3 shape at M = 1 and 16, even evened out: a warp's run pays for the strip crossing in
// every block (the copy cursors' wrap test, +18 instructions a block, 9%), in its prologue (+109)
// and in a cluster reduction that sums 4 C runs where the split grid's sums 4 warps locally first.
// So it is opt-in (DecodeChoices::stream_k), for tuning and for parts where a split grid's whole
// strips quantize worse.
constexpr int kStreamKMaxStrips = 8;
SF_HOST_DEVICE constexpr int stream_k_cluster_strips(int64_t n_blocks, int strips_per_cluster,
                                                     int64_t cluster) {
  const int64_t left = n_blocks - cluster * strips_per_cluster;
  return static_cast<int>(left < strips_per_cluster ? left : strips_per_cluster);
}
// The kernel's run arithmetic is 32-bit (a 64-bit division is a long instruction sequence on the
// GPU): stream_k_plan keeps units * runs below 2^31.
constexpr int64_t kStreamKMaxUnitRuns = int64_t(1) << 31;
// Run `run` of `runs` over `units` flat units:
// [stream_k_run_begin(run), stream_k_run_begin(run + 1)).
SF_HOST_DEVICE constexpr uint32_t stream_k_run_begin(uint32_t units, uint32_t runs, uint32_t run) {
  return units * run / runs;
}
// The run that holds unit u (0 <= u < units): the last r with stream_k_run_begin(r) <= u, i.e.
// ceil((u + 1) runs / units) - 1: one division, where a scan of the runs took two a run.
SF_HOST_DEVICE constexpr uint32_t stream_k_run_of(uint32_t units, uint32_t runs, uint32_t u) {
  return ((u + 1) * runs + units - 1) / units - 1;
}
// Where a run's partial sums of tile t (units [t k_blocks, (t + 1) k_blocks)) wait for the
// cluster reduction: a run that reached the tile's end parked them when it left the tile (its
// first tile: slot 0, a region of its own), any other at the end of its run (slot 1, its idle
// stages). A run that covers the whole tile stores it and parks nothing.
SF_HOST_DEVICE constexpr bool stream_k_parked_at_tile_end(uint32_t run_end, uint32_t tile_end) {
  return run_end >= tile_end;
}
// The shared memory a Stream-K CTA adds for its warps' slot-0 parking: one warp's sums.
SF_HOST_DEVICE constexpr int stream_k_park_bytes(int token_tiles) {
  return 4 * token_tiles * 4 * 32 * 4;
}

// The Stream-K grid for a problem (stream_k_strips S, C CTAs a cluster), or {0, 0} where none fits.
// Host only; plan_decode asks for it only where Stream-K is forced (DecodeChoices): on the H200 it
// measured slower than the split grid on every Llama-3 shape (v18, docs/perf/decode.md).
// Candidates: C = 2..kMaxClusterSplits (or forced_cluster), S = 1..kStreamKMaxStrips (or
// forced_strips), each warp's run at least kWarpSplitMinBlocksPerSplit / kWarpSplitWarps blocks
// (the split heuristic's six), 32-bit run arithmetic, at most one CTA per slot and every cluster
// resident at once (max_clusters(C), the occupancy query for the Stream-K instance). The cheapest
// is the one whose busiest SM streams the fewest blocks (busiest_sm_blocks), ties going to shorter
// CTAs.
struct StreamKPlan {
  int strips = 0;  // S; 0: no Stream-K grid fits
  int cluster = 0;  // C
};
template <typename MaxClusters>
StreamKPlan stream_k_plan(int64_t n_blocks, int64_t m_groups, int64_t k_blocks, int sm_count,
                          int ctas_per_sm, int forced_strips, int forced_cluster,
                          MaxClusters&& max_clusters) {
  StreamKPlan best;
  int64_t best_cost = 0, best_cta_blocks = 0;
  for (int c = 2; c <= kMaxClusterSplits; ++c) {
    if (forced_cluster > 0 && c != forced_cluster) continue;
    for (int s = 1; s <= kStreamKMaxStrips; ++s) {
      if (forced_strips > 0 && s != forced_strips) continue;
      const int64_t units = s * k_blocks;
      if (units < int64_t(c) * kWarpSplitMinBlocksPerSplit) continue;
      if (units * c * kWarpSplitWarps >= kStreamKMaxUnitRuns) continue;
      const int64_t clusters = (n_blocks + s - 1) / s * m_groups;
      const int64_t ctas = clusters * c;
      if (ctas > int64_t(sm_count) * ctas_per_sm) continue;
      const int64_t cta_blocks = (units + c - 1) / c;
      const int64_t cost = busiest_sm_blocks(ctas, cta_blocks, sm_count);
      // A full tie keeps the first tried, the smallest cluster: its reduction sums the fewest runs.
      if (best.strips != 0 &&
          (cost > best_cost || (cost == best_cost && cta_blocks >= best_cta_blocks))) {
        continue;
      }
      if (max_clusters(c) < clusters) continue;
      best = {s, c};
      best_cost = cost;
      best_cta_blocks = cta_blocks;
    }
  }
  return best;
}

}  // namespace sailfish::decode
