// Decode tier configuration: tile constants, the shared-memory formula and the split heuristic,
// usable on host and device so CPU tests can check them.
//
// The decode tier computes the swapped product Y^T[n][m] = W[n][k] . A[m][k]^T with
// mma.sync.m16n8k16: the weight is the A operand (16 weight rows per mma), the activations the B
// operand (8 tokens per mma). One packed int4 word is exactly one lane's A fragment of a 16 x 16
// weight slice (docs/FORMAT.md), so a word feeds one mma per 8 tokens with no shuffles; at M <= 8
// this needs half the tensor-core instructions of the unswapped form, which matters on Hopper,
// where mma.sync runs at well under the wgmma rate.
#pragma once

#include <cstdint>

#include "common/host_device.h"

namespace sailfish::decode {

using ::sailfish::detail::meta_rows_for;
using ::sailfish::detail::slice_scale_row;
using ::sailfish::detail::split_begin;

// A CTA owns one 64-row block strip of W and a contiguous range of its 64-column k-blocks; warp j
// owns n16 group j of the strip. 4 warps.
constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
// The warp-split kernel's warps a CTA (warp_split_kernel.cuh): each streams its share of the
// CTA's k-range. Four, or eight at one token tile where the plan's warps stream long
// (wide_warps_pay below; the "wide" instance).
constexpr int kWarpSplitWarps = 4;
constexpr int kWarpSplitWideWarps = 8;
// The cross-warp sum's fragments a warp adds and stores: 4 n16 groups x token_tiles tiles over
// the CTA's warps (fragment f = warp + warps * q; with 8 warps at one tile, warps 4-7 hold none).
SF_HOST_DEVICE constexpr int warp_split_fragments_per_warp(int token_tiles, int warps) {
  return (4 * token_tiles + warps - 1) / warps;
}
// Whether some warps hold fewer fragments than others (none, at eight warps and one tile).
SF_HOST_DEVICE constexpr bool warp_split_some_warps_idle(int token_tiles, int warps) {
  return warp_split_fragments_per_warp(token_tiles, warps) * warps != 4 * token_tiles;
}
// Pipeline depth: stages of (one 64 x 64 weight block, its activation slice, its scale rows).
// A build option (-DSAILFISH_DECODE_STAGES=N) so the depth can be swept on the device.
#ifndef SAILFISH_DECODE_STAGES
#define SAILFISH_DECODE_STAGES 4
#endif
constexpr int kStages = SAILFISH_DECODE_STAGES;
// Scale rows one k-block can need: group 16 gives 4 per 64 columns.
constexpr int kMaxMetaRows = 4;
// The strip kernel's scale rows, then zero shifts, then folds, kMetaPartBytes each.
constexpr int kMetaPartBytes = kMaxMetaRows * 64 * 2;
constexpr int kMetaStageBytes = 3 * kMetaPartBytes;
// Tokens per mma (the n8 of m16n8k16) and the token-tile counts compiled.
constexpr int kTokensPerTile = 8;
constexpr int kMaxTokenTiles = 8;  // 64 tokens per CTA
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

SF_HOST_DEVICE constexpr int weight_stage_bytes(int bits) { return 64 * 64 * bits / 8; }
SF_HOST_DEVICE constexpr int activation_stage_bytes(int token_tiles) {
  return token_tiles * kTokensPerTile * 64 * 2;  // tokens x 64 columns x 2 bytes
}
SF_HOST_DEVICE constexpr int stage_bytes(int bits, int token_tiles) {
  return weight_stage_bytes(bits) + activation_stage_bytes(token_tiles) + kMetaStageBytes;
}
SF_HOST_DEVICE constexpr int shared_bytes(int bits, int token_tiles) {
  return kStages * stage_bytes(bits, token_tiles);
}
// Token tiles up to which the warp-split kernel serves (M <= 32 per CTA); beyond, the strip kernel.
constexpr int kWarpSplitMaxTiles = 4;

// The warp-split kernel sizes its stages at run time to what the problem reads, so that small M
// and symmetric weights fit more CTAs on an SM (v6: shared memory had held M = 1 to 3 CTAs and
// M = 16 to 2; now 4 and 3): a stage holds the 64 x 64 block, act_rows activation rows of 128
// bytes, and meta_rows scale rows (and as many zero-shift and zero-fold rows) of 128 bytes.
// Activation rows the CTA lacks are read from a zeroed 16-byte chunk in the warp's 128-byte
// header.
constexpr int kWarpHeaderBytes = 128;
SF_HOST_DEVICE constexpr int warp_split_stage_bytes(int bits, int act_rows, int meta_rows,
                                                    bool zero_points) {
  return weight_stage_bytes(bits) + act_rows * 128 + meta_rows * 128 * (zero_points ? 3 : 1);
}
// Whether the warp-split kernel's weight copies carry an L2 evict-first policy: at 1-2 token
// tiles, where the weight stream bounds the time. H200 A/B (docs/perf/decode.md, v40), geometric
// means against no policy: int4 bf16 M = 1 0.983x (70b.gate_up and 70b.down 0.964x), M = 9-16
// 0.993x; zero points M = 1 0.981x; fp16 M = 1 0.976x; int8 M = 1 0.995x. At three tiles it
// took ptxas 122 -> 128 registers and ran 1.036x slower (M = 24); at four 0.994x, not kept.
// A build option (-DSAILFISH_DECODE_EVICT_FIRST_MAX_TILES=0 turns the policy off) so it can be
// A/B'd on the device, cold and L2-resident.
#ifndef SAILFISH_DECODE_EVICT_FIRST_MAX_TILES
#define SAILFISH_DECODE_EVICT_FIRST_MAX_TILES 2
#endif
SF_HOST_DEVICE constexpr bool warp_split_evicts_weights_first(int token_tiles) {
  return token_tiles <= SAILFISH_DECODE_EVICT_FIRST_MAX_TILES;
}
// Stages per warp of the warp-split kernel, chosen per problem (plan_decode in launch.cu):
//   - 3-4 token tiles (M 17-32 per CTA): 3 or kStages, a run-time value (DecodeParams::
//     warp_stages; a per-block branch picks the wait's immediate). There a stage is mostly
//     activation rows (4 KB of 6.2 at M = 32, int4), and four stages hold an SM to 2 CTAs, 8
//     warps: the kernel was latency-bound. Three stages fit 3 CTAs (int4 g128 symmetric: an SM
//     gives 3 CTAs 3 x (75 KB + 1 KB reserved)), which ran the multi-wave grids 18-30% faster;
//     where the grid puts only about 2 CTAs on an SM anyway, four stages keep more blocks in
//     flight per warp and were up to 36% faster (H200, v12a in docs/perf/decode.md).
//   - 1-2 token tiles: kStages or warp_split_deep_stages(tiles), each a kernel instance of its
//     own: these kernels are bound by the SM's instruction stream, and the run-time count cost
//     them 2-10% (v13b). The deep pipeline is for grids that put few CTAs on an SM, where the
//     bytes in flight per SM bound the time: l3-8b.o at M = 1 (128 CTAs) 5.39 -> 4.97 us.
constexpr int kWarpSplitFewStages = 3;
// The deep pipeline's depth: six stages at one token tile, five at two (v41: against six, five
// ran 0.949x on l3-70b.down and 0.966-0.976x on l3-70b.o at M = 16, fp16 0.93-0.975x, the
// other 2-tile rows 0.98-1.00x; at one tile five lost on l3-8b.o, 1.005-1.025x int4 and 1.07x
// int8, and seven or eight lost at both, up to 1.18x at two tiles and 1.43x int8). Build options
// (-DSAILFISH_DECODE_DEEP_STAGES=N for one tile, ..._TWO_TILES=N for two) for device sweeps.
#ifndef SAILFISH_DECODE_DEEP_STAGES
#define SAILFISH_DECODE_DEEP_STAGES 6
#endif
#ifndef SAILFISH_DECODE_DEEP_STAGES_TWO_TILES
#define SAILFISH_DECODE_DEEP_STAGES_TWO_TILES 5
#endif
SF_HOST_DEVICE constexpr int warp_split_deep_stages(int token_tiles) {
  return token_tiles == 1 ? SAILFISH_DECODE_DEEP_STAGES : SAILFISH_DECODE_DEEP_STAGES_TWO_TILES;
}
SF_HOST_DEVICE constexpr bool warp_split_stages_vary(int token_tiles) {
  return token_tiles >= 3 && kStages > kWarpSplitFewStages;
}
SF_HOST_DEVICE constexpr int warp_split_min_stages(int token_tiles) {
  return warp_split_stages_vary(token_tiles) ? kWarpSplitFewStages : kStages;
}
// Whether the warp-split kernel has the deep instance: int4 at 1-2 token tiles, int8 at 1 (not
// when the build's kStages is that deep). int8 at 2 tiles needs 38 KB a warp for six stages,
// which holds an SM to one CTA; the deep plans it took ran 1.10-1.25x the time (v13b).
SF_HOST_DEVICE constexpr bool warp_split_has_deep(int bits, int token_tiles) {
  return (token_tiles == 1 || (token_tiles == 2 && bits == 4)) &&
         warp_split_deep_stages(token_tiles) > kStages;
}
// A lighter deep depth, one stage short of the deepest: int8 at one token tile, whose 4 KB blocks
// make a six-stage CTA 105-126 KB (M = 1-8, group 128), so that one stage can decide whether a
// second CTA fits an SM, and two resident CTAs of six stages keep 170 KiB of copies in flight
// (int4 at M = 1: 55 KB a CTA, 90 KiB). 0: none. plan_decode chooses between the two by
// warp_split_lighter_deep_pays. A build option (-DSAILFISH_DECODE_LIGHTER_DEEP=0: none, v41's
// plans) for device A/Bs.
#ifndef SAILFISH_DECODE_LIGHTER_DEEP
#define SAILFISH_DECODE_LIGHTER_DEEP 1
#endif
SF_HOST_DEVICE constexpr int warp_split_lighter_deep_stages(int bits, int token_tiles) {
  return SAILFISH_DECODE_LIGHTER_DEEP && bits == 8 && token_tiles == 1 &&
                 warp_split_has_deep(bits, token_tiles) &&
                 warp_split_deep_stages(token_tiles) - 1 > kStages
             ? warp_split_deep_stages(token_tiles) - 1
             : 0;
}
// The stage counts a warp that some warp-split instance is built with, one a slot: the few
// stages of 3-4 token tiles, kStages, the deep counts of one and two tiles, int8's lighter deep
// depth; 0 where a slot repeats an earlier one or (the lighter depth) is not built. What
// SAILFISH_DECODE_WARP_STAGES accepts and what tune() times at every depth.
constexpr int kWarpSplitStageCountSlots = 5;
SF_HOST_DEVICE constexpr int warp_split_stage_count(int slot) {
  const int counts[kWarpSplitStageCountSlots] = {
      kWarpSplitFewStages, kStages, warp_split_deep_stages(1), warp_split_deep_stages(2),
      warp_split_lighter_deep_stages(8, 1)};
  for (int earlier = 0; earlier < slot; ++earlier) {
    if (counts[earlier] == counts[slot]) return 0;
  }
  return counts[slot];
}
SF_HOST_DEVICE constexpr bool warp_split_builds_stages(int64_t stages) {
  for (int slot = 0; slot < kWarpSplitStageCountSlots; ++slot) {
    if (stages > 0 && warp_split_stage_count(slot) == stages) return true;
  }
  return false;
}
// The CTAs on a grid's busiest SM when its grid_ctas CTAs spread evenly over sm_count SMs (all of
// them where sm_count is not positive).
SF_HOST_DEVICE constexpr int64_t busiest_sm_ctas(int64_t grid_ctas, int sm_count) {
  return sm_count > 0 ? (grid_ctas + sm_count - 1) / sm_count : grid_ctas;
}
// How well a grid of grid_ctas sits on sm_count SMs that hold ctas_per_sm of its CTAs each
// (counted with the cluster push form's receive area where the plan will take it): 0, more than
// one wave; 1, one wave with no room on its busiest SM (ceil(grid_ctas / sm_count) CTAs) for a
// CTA of the next launch; 2, one wave with that room. The room matters because programmatic
// dependent launch starts the next kernel's CTAs while this one's run: where they cannot be
// resident, the next layer's weight stream waits for this grid to drain.
SF_HOST_DEVICE constexpr int warp_split_residency(int64_t grid_ctas, int sm_count,
                                                  int ctas_per_sm) {
  const int64_t busiest = busiest_sm_ctas(grid_ctas, sm_count);
  return ctas_per_sm >= busiest + 1 ? 2 : ctas_per_sm >= busiest ? 1 : 0;
}
// The most dynamic shared memory one CTA may ask for on sm_90 (the opt-in limit, 227 KB): the
// spread padding below may take a kernel instance up to it.
constexpr int kMaxLaunchSharedBytes = 227 * 1024;
// Dynamic shared memory (a multiple of 128 bytes, at least `shared`) with which an SM of
// smem_per_sm bytes, reserving reserved_per_cta for each CTA, holds at most `ctas` CTAs: ctas + 1
// of them no longer fit. 0 where `shared` already holds it to `ctas`, or where the padding would
// pass kMaxLaunchSharedBytes. The plan pads to the grid's even share, ceil(CTAs / SMs)
// (launch.cu, spread_over_sms): a grid smaller than what the SMs hold can otherwise land several
// CTAs on some SMs and none on others.
SF_HOST_DEVICE constexpr int spread_shared_bytes(int shared, int ctas, int smem_per_sm,
                                                 int reserved_per_cta) {
  if (ctas < 1 || (ctas + 1) * int64_t(shared + reserved_per_cta) > smem_per_sm) return 0;
  const int64_t least = smem_per_sm / (ctas + 1) - reserved_per_cta + 1;
  const int64_t padded = (least + 127) / 128 * 128;
  return padded > kMaxLaunchSharedBytes ? 0 : static_cast<int>(padded);
}
// The weight bytes one warp of a warp-split CTA streams: its share of a split's k-blocks,
// rounded up, of block_bytes each (PackedGeometry::block_bytes: 2 KB int4, 4 KB int8).
SF_HOST_DEVICE constexpr int64_t warp_split_warp_stream_bytes(int64_t k_blocks, int splits,
                                                              int64_t block_bytes,
                                                              int warps = kWarpSplitWarps) {
  const int64_t split_blocks = splits > 0 ? (k_blocks + splits - 1) / splits : k_blocks;
  return (split_blocks + warps - 1) / warps * block_bytes;
}
// Whether the plan pads by default (Options::decode_spread unset). H200, the warp-split kernel
// under programmatic dependent launch:
// - A grid of more CTAs than SMs (an even share of two or more) whose busiest SMs are more than
//   half of them (v46 in docs/perf/decode.md): 256 CTAs of l3-70b.o at M = 1-4 (two an SM where
//   four fit) ran 0.90x padded, l3-70b.down 0.975x, and two clustered splits forced at M = 9-16
//   (two an SM where three fit) 0.73-0.77x. On uneven grids (l3-8b.qkv, 192 CTAs, 60 SMs with
//   two) it lost 2%.
// - A share of one CTA an SM where each warp streams at least kShareOneLongWarpBytes (v49): the
//   padding takes away the room a CTA of the next launch needs to start early, which costs short
//   CTAs more than their uneven placement does (l3-8b.o, 128 CTAs of 16 KB a warp: 1.09-1.21x,
//   int8 32 KB 1.00-1.28x; q7.o 1.06-1.24x), while long ones gain from one an SM (int8
//   14336 x 4096, 128 CTAs of 112 KB a warp: l3-8b.down 0.965-0.974x at M = 1-4, mx.w2 0.970x;
//   at M = 16 two clustered splits, spread, in place of four splits and the reduce kernel,
//   0.969x). A build option (-DSAILFISH_DECODE_SHARE_ONE_WARP_KIB=N; 0 turns it off) for device
//   A/Bs.
#ifndef SAILFISH_DECODE_SHARE_ONE_WARP_KIB
#define SAILFISH_DECODE_SHARE_ONE_WARP_KIB 64
#endif
constexpr int64_t kShareOneLongWarpBytes = int64_t(SAILFISH_DECODE_SHARE_ONE_WARP_KIB) * 1024;
SF_HOST_DEVICE constexpr bool spread_pays(int64_t grid_ctas, int sm_count,
                                          int64_t warp_stream_bytes) {
  if (sm_count < 1 || grid_ctas < 2) return false;
  if (grid_ctas <= sm_count) {
    return kShareOneLongWarpBytes > 0 && warp_stream_bytes >= kShareOneLongWarpBytes;
  }
  const int64_t busiest_sms = grid_ctas - (busiest_sm_ctas(grid_ctas, sm_count) - 1) * sm_count;
  return 2 * busiest_sms > sm_count;
}
// Eight warps a CTA in place of four (the wide instance: one token tile, the split grid, four
// stages a warp) where each warp of the four-warp plan streams at least kWideWarpBytes, and the
// grid keeps as many of its CTAs (clusters) resident at once (launch.cu, choose_wide_warps). Twice
// the warps an SM on the same grid and cluster, each with half the chain of blocks, for the warps'
// latency-bound loop (v49's profile of l3-70b.down at M = 1: 1.73 warps a scheduler, 0.49 issues
// a cycle). H200 (v50 in docs/perf/decode.md; three interleaved rounds against the rule off):
// l3-70b.down 0.946x at M = 1 (112 KB a warp; 94% of the roofline), 0.951x at M = 4, 0.965x at
// M = 8; q72.down 0.946x, q32.down 0.907x; int8 l3-8b.down and mx.w2 0.95-0.96x (0.91x at group
// 64); zero points 0.933x, fp16 0.958-0.965x. Forced onto every one-tile plan it lost wherever
// warps were short (up to 1.69x; l3-70b.o, 32 KB a warp, 1.00-1.03x), and where the wide CTAs
// took a grid to a second wave (int8 l3-70b.down, 1.047x), which the plan's check refuses. No
// other row moved by more than 1.2%. A build option (-DSAILFISH_DECODE_WIDE_WARP_KIB=N; 0 turns
// the rule off) for device A/Bs.
#ifndef SAILFISH_DECODE_WIDE_WARP_KIB
#define SAILFISH_DECODE_WIDE_WARP_KIB 96
#endif
constexpr int64_t kWideWarpBytes = int64_t(SAILFISH_DECODE_WIDE_WARP_KIB) * 1024;
SF_HOST_DEVICE constexpr bool wide_warps_pay(int token_tiles, int64_t warp_stream_bytes) {
  return kWideWarpBytes > 0 && token_tiles == 1 && warp_stream_bytes >= kWideWarpBytes;
}
// The one instance built with eight warps (kernel_instances.cuh).
SF_HOST_DEVICE constexpr bool warp_split_has_wide(int token_tiles, int stages, bool stream_k) {
  return token_tiles == 1 && stages == kStages && !stream_k;
}
// Two clustered splits at two token tiles, spread (launch.cu, plan_decode): four stages a warp
// where a warp's share of a split is short, the deep depth where it is long. H200 A/B (v47 in
// docs/perf/decode.md, three interleaved rounds): l3-70b.o (16 blocks a warp) at M = 13 and 16
// ran 0.957x as a four-stage pair against the deep plan (fp16 0.971x, group 64 0.969x); l3-70b.down
// and q72.down (56 and 58 blocks) at M = 9 and 12 ran 0.969-0.982x as a five-stage pair against
// the four-stage one (group 64 0.969x; fp16 1.010x at M = 9). No other row of Llama-3, Qwen2.5 or
// Mixtral at M = 9-16 moved by more than 1.1%.
constexpr int kPairShortWarpBlocks = 24;
// A warp's blocks in a two-split plan: its quarter of half the strip's k-blocks, rounded up.
SF_HOST_DEVICE constexpr int64_t pair_blocks_per_warp(int64_t k_blocks) {
  return (k_blocks + 2 * kWarpSplitWarps - 1) / (2 * kWarpSplitWarps);
}
SF_HOST_DEVICE constexpr bool pair_warps_are_short(int64_t k_blocks) {
  return pair_blocks_per_warp(k_blocks) <= kPairShortWarpBlocks;
}
// A grid of more CTAs than SMs whose busiest SMs (those given ceil(grid_ctas / sm_count) CTAs when
// it spreads evenly) are at most half of the SMs. Once the others finish, those few draw the DRAM
// stream alone, and the deep pipeline's extra bytes in flight let them draw more of it.
// plan_decode tries the deep instance on such grids (1-2 token tiles) and keeps it where its plan
// has the same grid and epilogue and still fits one wave (warp_split_residency >= 1). H200
// (v42d in docs/perf/decode.md): l3-8b.qkv at M = 1, 96 strips x 2 splits = 192 CTAs, 60 SMs
// with two: six stages 5.45 us against 5.64 at four (0.967x), int8 five 0.968x; at M = 16
// 1.006x. Where the deep plan would leave one wave it lost (l3-70b.qkv at M = 16, 320 CTAs, two
// an SM at five stages: 1.21x; l3-8b.down at M = 1, 448 CTAs: 1.14x). A build option
// (-DSAILFISH_DECODE_DEEP_FOR_UNEVEN_GRIDS=0 turns it off) for device A/Bs.
#ifndef SAILFISH_DECODE_DEEP_FOR_UNEVEN_GRIDS
#define SAILFISH_DECODE_DEEP_FOR_UNEVEN_GRIDS 1
#endif
SF_HOST_DEVICE constexpr bool warp_split_grid_uneven(int64_t grid_ctas, int sm_count) {
  if (!SAILFISH_DECODE_DEEP_FOR_UNEVEN_GRIDS || sm_count < 1 || grid_ctas <= sm_count) {
    return false;
  }
  const int64_t busiest_sms = grid_ctas - (busiest_sm_ctas(grid_ctas, sm_count) - 1) * sm_count;
  return 2 * busiest_sms <= sm_count;
}
// The copies a deep plan keeps in flight on its busiest SM: each resident CTA's warps hold all
// but the stage they compute on. ctas_per_sm: what the occupancy query allows; the grid may hold
// fewer (ceil(grid_ctas / sm_count)).
SF_HOST_DEVICE constexpr int64_t warp_split_in_flight_bytes(int64_t grid_ctas, int sm_count,
                                                            int ctas_per_sm, int stages,
                                                            int stage_bytes) {
  const int64_t spread = sm_count > 0 ? busiest_sm_ctas(grid_ctas, sm_count) : 0;
  const int64_t resident = spread < ctas_per_sm ? spread : ctas_per_sm;
  return resident * kWarpSplitWarps * (stages - 1) * int64_t(stage_bytes);
}
// Whether plan_decode takes the lighter deep depth over the deepest (each plan with its own grid
// and CTAs an SM): where it sits better on the SMs (warp_split_residency), else, with bf16
// activations, where the deepest keeps more than kDeepInFlightBudgetBytes in flight on an SM.
// H200, int8 g128, five stages against six (v41b, v42 in docs/perf/decode.md; M = 1-8 on the
// Llama-3 shapes):
//   - room for the next launch: l3-8b.o (128 CTAs) at M = 4-8 holds one CTA an SM at six stages
//     with the push area (Nsight Compute: a 135 KB shared-memory carveout) and two at five:
//     0.81x bf16, 0.79-0.81x zero points (from M = 2, whose larger stage crosses the line
//     sooner), 0.88-0.89x fp16; l3-8b.down at M = 6-8 0.97-0.99x, fp16 1.03x;
//   - one wave: l3-70b.o at M = 4 (256 CTAs): the push area costs six stages the second CTA an
//     SM, so that plan ran the barrier form; five with the push form 0.89x;
//   - bytes in flight: l3-70b.down and l3-70b.o at M = 1-3, two CTAs an SM either way, 170 KiB
//     at six (136 at five): 0.97-0.99x bf16, zero points included; fp16 1.00-1.03x, so fp16 has
//     no budget (its int8 loop is 243 instructions a block to bf16's 459: it is not the copies
//     of an issue-bound loop that wait);
//   - neither: l3-8b.o at M = 1-3, two CTAs an SM at six with room for the next launch, 85 KiB:
//     five ran 1.06-1.08x (fp16 1.20-1.21x), so six stays.
// The int4 two-tile rows agree with the budget (v41: 165 KiB at six, 132 at five on l3-70b.down
// at M = 16, five 0.949x), though that instance has only the one deep depth. A build option
// (-DSAILFISH_DECODE_DEEP_IN_FLIGHT_KIB=N) for device sweeps.
#ifndef SAILFISH_DECODE_DEEP_IN_FLIGHT_KIB
#define SAILFISH_DECODE_DEEP_IN_FLIGHT_KIB 150
#endif
constexpr int64_t kDeepInFlightBudgetBytes = int64_t(SAILFISH_DECODE_DEEP_IN_FLIGHT_KIB) * 1024;
SF_HOST_DEVICE constexpr bool warp_split_lighter_deep_pays(int64_t deepest_grid_ctas,
                                                           int deepest_ctas_per_sm,
                                                           int64_t lighter_grid_ctas,
                                                           int lighter_ctas_per_sm, int sm_count,
                                                           int deepest_stages, int stage_bytes,
                                                           bool bf16) {
  const int deepest = warp_split_residency(deepest_grid_ctas, sm_count, deepest_ctas_per_sm);
  const int lighter = warp_split_residency(lighter_grid_ctas, sm_count, lighter_ctas_per_sm);
  if (deepest != lighter) return lighter > deepest;
  return bf16 && warp_split_in_flight_bytes(deepest_grid_ctas, sm_count, deepest_ctas_per_sm,
                                            deepest_stages, stage_bytes) >
                     kDeepInFlightBudgetBytes;
}
SF_HOST_DEVICE constexpr int warp_split_region_bytes(int stage, int stages) {
  return kWarpHeaderBytes + stages * stage;
}
// The largest a warp-split CTA with `stages` stages a warp can need (token_tiles * 8 rows, group
// 16 with zero points); each instance's shared-memory attribute is set to it once.
SF_HOST_DEVICE constexpr int warp_split_max_shared_bytes(int bits, int token_tiles,
                                                         int stages = kStages,
                                                         int warps = kWarpSplitWarps) {
  const int stage =
      warp_split_stage_bytes(bits, token_tiles * kTokensPerTile, kMaxMetaRows, true);
  return warps * warp_split_region_bytes(stage, stages);
}
static_assert(warp_split_max_shared_bytes(8, kWarpSplitMaxTiles) <= 227 * 1024 &&
                  warp_split_max_shared_bytes(8, 1, warp_split_deep_stages(1)) <= 227 * 1024 &&
                  warp_split_max_shared_bytes(4, 2, warp_split_deep_stages(2)) <= 227 * 1024 &&
                  warp_split_max_shared_bytes(8, 1, kStages, kWarpSplitWideWarps) <= 227 * 1024,
              "every warp-split instance fits an SM at its deepest pipeline");
static_assert(shared_bytes(4, 1) == kStages * (2048 + 1024 + 1536),
              "int4, 8 tokens: 4.5 KB a stage");
static_assert(shared_bytes(8, 8) == kStages * (4096 + 8192 + 1536),
              "int8, 64 tokens: 13.5 KB a stage");
static_assert(kStages >= 2 && shared_bytes(8, 8) <= 227 * 1024, "stages must fit an SM");

// Whether the warp-split kernel reads every k-block's 64 activation columns whole, with no K tail
// test in its loop (warp_split_kernel.cuh: kLeanLoop, v38): then plan_decode copies activations
// whose K is not a multiple of 64 into a workspace zero-padded to k_pad.
SF_HOST_DEVICE constexpr bool warp_split_reads_whole_blocks(int token_tiles) {
  return token_tiles == 4;
}

// Token tiles compiled: 1, 2, 3, 4, 6, 8 (M up to 8, 16, 24, 32, 48, 64 per CTA).
SF_HOST_DEVICE constexpr int token_tiles_for(int64_t m) {
  return m <= 8 ? 1 : m <= 16 ? 2 : m <= 24 ? 3 : m <= 32 ? 4 : m <= 48 ? 6 : 8;
}

// The warp-split kernel relies on it: a CTA of kTiles token tiles has more than (kTiles - 1) * 8
// rows, so every tile but the last is full (its copies and ldmatrix rows skip the row test).
SF_HOST_DEVICE constexpr bool only_last_token_tile_partial(int64_t max_m) {
  for (int64_t m = 1; m <= max_m; ++m) {
    if (m <= (token_tiles_for(m) - 1) * kTokensPerTile) return false;
  }
  return true;
}
static_assert(only_last_token_tile_partial(kWarpSplitMaxTiles * kTokensPerTile),
              "a warp-split CTA's tiles before the last are full");

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
// Run `run` of `runs` over `units` flat units: [stream_k_run_begin(run), stream_k_run_begin(run + 1)).
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
// The busiest SM's blocks when `ctas` CTAs of `blocks_per_cta` blocks spread evenly over the SMs.
SF_HOST_DEVICE constexpr int64_t busiest_sm_blocks(int64_t ctas, int64_t blocks_per_cta,
                                                   int sm_count) {
  return busiest_sm_ctas(ctas, sm_count) * blocks_per_cta;
}
// The shared memory a Stream-K CTA adds for its warps' slot-0 parking: one warp's sums.
SF_HOST_DEVICE constexpr int stream_k_park_bytes(int token_tiles) {
  return 4 * token_tiles * 4 * 32 * 4;
}

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
