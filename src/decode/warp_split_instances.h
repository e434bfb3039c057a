// The warp-split kernel's instances and the rules that choose among them: stages a warp (few,
// four, deep, int8's lighter deep), eight warps a CTA, the evict-first weight stream. Each
// instance is compiled (kernel_instances.cuh); plan_decode (launch.cu) picks one per problem.
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "decode/grid_placement.h"
#include "decode/tile_shapes.h"

namespace sailfish::decode {

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
static_assert(warp_split_max_shared_bytes(8, kWarpSplitMaxTiles) <= 227 * 1024 &&
                  warp_split_max_shared_bytes(8, 1, warp_split_deep_stages(1)) <= 227 * 1024 &&
                  warp_split_max_shared_bytes(4, 2, warp_split_deep_stages(2)) <= 227 * 1024 &&
                  warp_split_max_shared_bytes(8, 1, kStages, kWarpSplitWideWarps) <= 227 * 1024,
              "every warp-split instance fits an SM at its deepest pipeline");

}  // namespace sailfish::decode
