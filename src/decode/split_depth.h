// Split-K depth: how many CTAs share a strip's k-blocks. The wave rule that sets the depth, the
// rules that pair a one-split grid, and the depth the cluster epilogue can take (or the reduce
// kernel's fallback). Each rule carries the H200 figures it was drawn from.
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "decode/cluster_epilogue.h"
#include "decode/grid_placement.h"

namespace sailfish::decode {

// Each split keeps at least this many k-blocks, so its pipeline fills (strip kernel). The
// warp-split kernel divides a split among its 4 warps and wants at least 6 blocks per warp: a
// warp's prologue and epilogue cost about two blocks' worth of instructions, and the kernel is
// bound by the SM's instruction stream, so short warps spend a large share on them.
//   - v9 (decode_v6_split_s*.json): 2-2.7 blocks per warp ran up to 31% longer than 4;
//   - v11b, forced depths 1-8 on 14 shapes at M = 1 and 16 (decode_v11_split_sweep*.json):
//     with this rule the heuristic's depth is on average 1.038x the best depth's time (the
//     geometric mean over the 28 cases), against 1.070x at 4 blocks per warp and 1.062x at 8;
//     l3-8b.o 5.38 us against 6.41 at M = 1, l3-8b.qkv at M = 16 8.28 against 10.84; worst case
//     m13b.o (5120 x 5120) at M = 16, 1.12x (3 splits; 4 was best).
constexpr int kMinBlocksPerSplit = 4;
constexpr int kWarpSplitMinBlocksPerSplit = 24;

// Split-K depth: the largest that keeps the grid within one wave (sm_count * ctas_per_sm CTAs),
// at least 1, never below min_blocks_per_split k-blocks per split. A second, partial wave costs
// more than the extra loads in flight give: on the H200 (warp-split kernel, int4 g128) grids of
// 1.1-1.3 waves ran 20-45% slower than the split depth just below, and the depth that fills one
// wave was the fastest or within 13% of it on all 16 (shape, M in {1, 16}) cases of a 1-8 sweep
// (docs/perf/decode.md).
// Worked example, H200 (132 SMs), warp-split kernel, int4 g128 at M = 1 (4 CTAs/SM: 528 slots):
//   l3-70b.o, N = K = 8192 (128 strips, 128 k-blocks): 528 / 128 -> 4 splits (512 CTAs);
//   l3-8b.qkv, N = 6144 (96 strips, 64 k-blocks): 5 by the wave, capped at 64 / 24 -> 2 splits;
//   l3-8b.gate_up (448 strips): 1 split.
SF_HOST_DEVICE constexpr int split_count(int64_t n_blocks, int64_t m_groups, int64_t k_blocks,
                                         int sm_count, int ctas_per_sm,
                                         int min_blocks_per_split = kMinBlocksPerSplit) {
  const int64_t base = n_blocks * m_groups;
  const int64_t slots = int64_t(sm_count) * ctas_per_sm;
  int64_t splits = slots / base;
  const int64_t cap = k_blocks / min_blocks_per_split > 0 ? k_blocks / min_blocks_per_split : 1;
  if (splits > cap) splits = cap;
  if (splits < 1) splits = 1;
  return static_cast<int>(splits);
}

// The warp-split kernel's depth: six blocks per warp (kWarpSplitMinBlocksPerSplit) where the
// grid still covers at least half the SMs at that depth (l3-8b.o: 64 strips x 2 splits = 128
// CTAs on 132 SMs, the fastest depth); a grid that cannot (router GEMVs: one to four strips)
// keeps two blocks per warp, since there parallelism, not the per-warp overhead, is what is short
// (H200, K x N = 2880 x 32 at M = 1: 4.0 us at 5 splits, 5.3 us at 2).
constexpr int kWarpSplitMinBlocksSmallGrid = 8;
SF_HOST_DEVICE constexpr int warp_split_count(int64_t n_blocks, int64_t m_groups,
                                              int64_t k_blocks, int sm_count, int ctas_per_sm) {
  const int splits = split_count(n_blocks, m_groups, k_blocks, sm_count, ctas_per_sm,
                                 kWarpSplitMinBlocksPerSplit);
  if (2 * n_blocks * m_groups * splits >= sm_count) return splits;
  return split_count(n_blocks, m_groups, k_blocks, sm_count, ctas_per_sm,
                     kWarpSplitMinBlocksSmallGrid);
}

// A grid of more tiles (strips x M groups) than resident CTAs keeps one split. v12a paired such
// grids (two clustered splits) where that cut the waves' blocks by a fifth, on l3-8b.gate_up at
// M = 24 and 32 (45.4 -> 36.6 us then); on the kernels since (a third CTA an SM at three stages,
// v12a's own change, and the push form) every grid that rule paired ran slower than one split:
// sailfish::tune chose one split on them (v32), and an A/B on the H200 (v32b in
// docs/perf/decode.md; one split against v12a's pair, the same run) measured
//   l3-8b.gate_up (448 tiles x 64 blocks): M = 16 0.999x, 24 0.933x, 32 0.964x;
//   q7.gate_up (592 x 56): M = 1 0.976x, 16 0.940x, 32 0.911x;
//   4096 x 38400 (600 x 64) at M = 1 0.953x; 4096 x 33280 (520 x 64) at M = 16 0.902x, 32 0.867x.
// Uneven and partial waves still pay for a pair (below).

// A grid of one split that fits one wave but spreads unevenly over the SMs: two splits instead
// (clustered pairs) when that cuts the blocks the busiest SM streams by a tenth or
// more. Counted per SM, ceil(tiles * splits / sm_count) CTAs of k_blocks / splits blocks: with
// room for several CTAs an SM, the hardware spreads a one-wave grid over every SM first, so the
// SMs that get one CTA more set the time, and half-length CTAs even that out. Measured on the
// H200 at M = 1 (528 slots; split sweep in docs/perf/decode.md, v23):
//   l3-8b.gate_up, 448 tiles x 64 blocks: 4 x 64 -> 7 x 32 a SM (0.875), 17.45 -> 16.92 us;
//   l3-70b.gate_up (896 tiles) is a multi-wave grid, and even there: 7 x 128 -> 14 x 64 (1.0).
// plan_decode asks it at 1-2 token tiles only (launch.cu says why).
SF_HOST_DEVICE constexpr bool one_wave_split_pays(int64_t tiles, int64_t k_blocks,
                                                  int64_t sm_count, int64_t slots) {
  if (sm_count < 1 || tiles > slots || tiles <= sm_count ||
      k_blocks / 2 < kWarpSplitMinBlocksPerSplit) {
    return false;
  }
  const int64_t one = (tiles + sm_count - 1) / sm_count * k_blocks;
  const int64_t two = (2 * tiles + sm_count - 1) / sm_count * ((k_blocks + 1) / 2);
  return 10 * two <= 9 * one;
}

// A one-split grid of less than one wave that cannot spread evenly (tiles not a multiple of the
// SMs) and that leaves room for another CTA on its busiest SM: two splits instead (clustered
// pairs), which fill every SM's slots. The busiest-SM count above comes out level on these grids,
// yet the pair ran far faster; the one-split grid ran slower than a larger, even one (H200,
// int4 g128, K = 4096 at M = 16: 224 strips 16.46 us, 264 strips 12.50), so the SM shares are
// not the even spread that count assumes, and the rule is drawn from the sweep itself (v31 in
// docs/perf/decode.md, one split -> two, 3 CTAs an SM at M = 16 and 4 at M = 1):
//   M = 16, 224 and 250 strips, K = 4096 and 8192: 0.74-0.85x (Mixtral's 4096 x 14336 expert
//     is the 224-strip K = 4096 grid);
//   M = 1, 380 strips: 0.83-0.90x;
// and where it does not apply, the pair lost: 264 strips at M = 16 (even, 1.01-1.15x),
// 380-396 strips at M = 16 (3 a SM, full: 1.04-1.11x), 520 strips at M = 1 (4 a SM, full:
// 0.99-1.09x). One measured miss is left: 396 strips at M = 1 (even, 3 of 4 slots) ran
// 0.84-0.91x at two splits. plan_decode asks it at 1-2 token tiles and for int4 only, where it
// was measured (int8 at one token tile has int8_tail_split_pays below).
SF_HOST_DEVICE constexpr bool partial_wave_split_pays(int64_t tiles, int64_t k_blocks,
                                                      int64_t sm_count, int ctas_per_sm) {
  if (sm_count < 1 || tiles <= sm_count || tiles % sm_count == 0 ||
      k_blocks / 2 < kWarpSplitMinBlocksPerSplit) {
    return false;
  }
  return (tiles + sm_count - 1) / sm_count < ctas_per_sm;
}

// int8 at one token tile: two splits (clustered pairs, push form) wherever one split leaves more
// than one CTA an SM and the SM still holds 3 CTAs with the push form's receive area
// (ctas_per_sm, counted with it), even where the wave counts above come out level. An int8
// k-block is 4 KB, twice int4's, so a one-split CTA streams twice as long and the SMs that finish
// their last CTA early idle longer; half-length CTAs shorten that tail. Where the receive area
// costs the third CTA (int8 g128 at M = 4, g32 at M = 3), or only 2 fit anyway (g128 at M = 5-8),
// the pair lost. H200, v30 in docs/perf/decode.md, one split -> two clustered splits, g128:
//   M = 1-3 (3 CTAs an SM with push): l3-70b.gate_up 0.954-0.973x, 5120 x 55296 0.972-0.978x,
//     8192 x 25344 0.989-0.992x, 4096 x 38400 0.955-0.969x;
//   M = 4 (the barrier form, 3 CTAs): 0.980-1.061x; M = 8 (2 CTAs): 1.009-1.074x.
// One measured miss: 4096 x 38400 at g32, M = 1-2, 1.034x (l3-70b.gate_up at g32: 0.975x).
// int4 keeps the wave rules: its pair ran 0.99-1.01x one split on l3-70b.gate_up at M = 1 (v16,
// v30), 1.04x on 5120 x 55296 (v30) and 1.01x on l3-70b.gate_up at M = 32 (v12a).
constexpr int kInt8TailSplitMinCtasPerSm = 3;
SF_HOST_DEVICE constexpr bool int8_tail_split_pays(int bits, int token_tiles, int64_t tiles,
                                                   int64_t k_blocks, int sm_count,
                                                   int ctas_per_sm) {
  return bits == 8 && token_tiles == 1 && sm_count > 0 && tiles > sm_count &&
         ctas_per_sm >= kInt8TailSplitMinCtasPerSm && k_blocks / 2 >= kWarpSplitMinBlocksPerSplit;
}

// The cluster epilogue saves the reduce kernel's launch and its partials traffic: 1.5-3.4 us on
// the H200 (v10a, docs/perf/decode.md), about 9 MB of weight stream at ~4.5 TB/s.
constexpr int64_t kClusterSavedStreamBytes = 9'000'000;

// The pair fallback below gives few strips over long K (80 strips of 432 k-blocks: q32.down, N =
// 5120) an uneven grid: 160 CTAs on 132 SMs, 28 of them streaming two CTAs' 432 blocks where the
// mean is 262. Four clustered splits there (320 CTAs of 108 blocks, 324 on the busiest SM) where
// that cuts the busiest SM's blocks by a tenth or more, counted as busiest_sm_blocks does; the plan
// pads the quads to that share (launch.cu, pad_quads). H200, int4 g128 (v51 in
// docs/perf/decode.md; three interleaved rounds against the rule off): q32.down 0.826x the pairs'
// time at M = 1 and 0.825x at M = 8, q3-32.down (25600 x 5120) 0.827x / 0.830x, g27.down (21504 x
// 5376, 84 strips) 0.765x / 0.773x; fp16 0.815-0.847x, zero points at M = 8 0.766-0.822x. In the
// depth sweep three, five and six splits ran 0.79-1.19x the pairs there, and eight do not fit
// one wave. Rows whose pairs sit evenly (l3-70b.down, l3-70b.o: 256 CTAs, two an SM) keep them
// (four splits ran 1.21x and 1.33x); no other row moved more than 0.7%. A build option
// (-DSAILFISH_DECODE_QUAD_FALLBACK=0 turns it off) for device A/Bs.
#ifndef SAILFISH_DECODE_QUAD_FALLBACK
#define SAILFISH_DECODE_QUAD_FALLBACK 1
#endif
constexpr bool kQuadFallback = SAILFISH_DECODE_QUAD_FALLBACK != 0;
// `tiles`: the CTAs of one split (strips x M groups).
SF_HOST_DEVICE constexpr bool quad_fallback_pays(int64_t tiles, int64_t k_blocks, int sm_count) {
  const int64_t pairs = busiest_sm_blocks(2 * tiles, (k_blocks + 1) / 2, sm_count);
  const int64_t quads = busiest_sm_blocks(4 * tiles, (k_blocks + 3) / 4, sm_count);
  return kQuadFallback && sm_count > 0 &&
         k_blocks / 4 >= kWarpSplitMinBlocksPerSplit && 10 * quads <= 9 * pairs;
}

// The split depth for Epilogue::kCluster, or 0 for none (then kPartials keeps `splits`).
// Host only. max_clusters(s) is how many clusters of s CTAs can be resident at once (the occupancy
// query; a cluster must fit in one GPC, so on the H200 it is less than SMs x CTAs per SM / s).
//   - keep_depth (a forced depth, or the pair of a wave rule above, whose grid can be more than
//     one wave by design): `splits`, if a cluster of it can be scheduled at all;
//   - heuristic depth: `splits` if its clusters_needed (strips x M groups) clusters are all
//     resident at once (one wave, as split_count intends). Otherwise the deepest shallower depth
//     s whose clusters are, but only where the loads it leaves out of flight cost less than the
//     launch it saves: weight_bytes x (splits - s) / s < kClusterSavedStreamBytes. Measured (v10a):
//     l3-8b.qkv at M = 16, 4 -> 3 splits, 13.4 -> 9.9 us; l3-70b.down at M = 1, 4 -> 3, 35.9 ->
//     42.4 us.
//   - pair_fallback_ctas > 0: where the rules above give no cluster, pairs (2 splits) if all
//     their clusters are resident and their grid, 2 x clusters_needed CTAs, leaves at most one
//     in 16 of pair_fallback_ctas (the SM count) idle. plan_decode asks for it at one token tile
//     when the plan would otherwise end on the reduce kernel (v13c): l3-70b.o at M = 1 4 splits
//     and the reduce kernel 13.7 us, 2 clustered splits 12.2; l3-70b.down 34.5 -> 33.5. Pairs
//     pack evenly into a GPC, unlike the 3-CTA clusters the byte rule above was measured on.
//     First written as "every SM busy"; int8 l3-8b.down at M = 1 (64 strips: 128 CTAs on 132
//     SMs) then kept 6 splits and the reduce kernel, 20.07 us, against 18.95 for the pairs
//     (v29): four idle SMs cost less than the second launch.
//   - quad_k_blocks > 0 (plan_decode asks it with the pair fallback at one token tile): four
//     clustered splits in place of the fallback's pairs where quad_fallback_pays on a grid of
//     quad_k_blocks k-blocks, the heuristic depth was at least four and their clusters are all
//     resident at once.
template <typename MaxClusters>
int cluster_split_count(int splits, bool keep_depth, int64_t clusters_needed,
                        int64_t weight_bytes, MaxClusters&& max_clusters,
                        int64_t pair_fallback_ctas = 0, int64_t quad_k_blocks = 0) {
  if (splits < 2) return 0;
  if (keep_depth) return splits <= kMaxClusterSplits && max_clusters(splits) >= 1 ? splits : 0;
  const bool pairs_fill =
      pair_fallback_ctas > 0 && 16 * (2 * clusters_needed) >= 15 * pair_fallback_ctas;
  for (int s = splits < kMaxClusterSplits ? splits : kMaxClusterSplits; s >= 2; --s) {
    if (s < splits && weight_bytes * (splits - s) >= kClusterSavedStreamBytes * s) break;
    if (max_clusters(s) >= clusters_needed) return s;
  }
  if (!pairs_fill || max_clusters(2) < clusters_needed) return 0;
  const bool quads = quad_k_blocks > 0 && splits >= 4 &&
                     quad_fallback_pays(clusters_needed, quad_k_blocks,
                                        static_cast<int>(pair_fallback_ctas)) &&
                     max_clusters(4) >= clusters_needed;
  return quads ? 4 : 2;
}

}  // namespace sailfish::decode
