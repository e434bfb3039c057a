// Prefill tier configuration: the CTA tile, the shared-memory stage formula, the work-unit order
// and the split heuristic, usable on host and device so CPU tests can check them.
//
// The prefill tier computes the swapped product Y^T[n][m] = W[n][k] . A[m][k]^T with
// wgmma.m64nNk16: the dequantized weight is the register-sourced A operand (64 weight rows per
// consumer warpgroup), the activations the shared-memory B operand (N = the CTA's tokens, read
// through a 128-byte-swizzled descriptor). One packed int4 word is exactly one lane's A fragment
// of a 16 x 16 weight slice (docs/FORMAT.md), so dequantization writes wgmma's registers directly.
#pragma once

#include <cstdint>

#include "common/host_device.h"

namespace sailfish::prefill {

using ::sailfish::detail::split_begin;

// Warp specialization: one producer warp issues every copy (one per lane); two consumer
// warpgroups each own 64 of the CTA's 128 weight rows (consumer c: rows 64c .. 64c + 63).
// (Three consumers with 192-row tiles were measured and gave no more rows per second:
// docs/perf/prefill.md, v6.)
constexpr int kConsumers = 2;

// CTAs per SM by token width. A CTA's consumer warps run one dependent chain per k-block (wait,
// shared load, dequantize, wgmma); with 16-64-token tiles that chain, not the tensor cores, sets
// the step time (measured: 430-570 ns per k-block at 16-64 tokens against 520-720 at 128, issue
// slots 34% busy: docs/perf/prefill.md, v7), so narrow tiles run two CTAs per SM to give each
// scheduler four consumer warps instead of two. Wide tiles need the registers and shared memory
// of a whole SM.
SF_HOST_DEVICE constexpr int ctas_per_sm(int tokens) { return tokens <= 64 ? 2 : 1; }
// Threads per CTA. One CTA per SM: warpgroup 0 produces (warp 0; warps 1-3 exit) and hands its
// registers to consumer warpgroups 1-2 with setmaxnreg (40 + 2 x 232 = 504 per thread-triple:
// 64K registers / 128 threads per warpgroup). Two CTAs per SM: consumer warpgroups 0-1 and one
// producer warp 8, 288 threads, so no registers sit in idle warps. ptxas caps such a kernel at 96
// registers a thread, not 64K / 576 = 113: an SM's 18 warps put five on some scheduler, whose
// 16K registers give each of their threads 102, rounded down to the allocation unit of 8
// (docs/perf/prefill.md, v12; a 384-thread CTA would get 80 and spill).
SF_HOST_DEVICE constexpr int cta_threads(int tokens) {
  return ctas_per_sm(tokens) == 1 ? 128 * (1 + kConsumers) : 128 * kConsumers + 32;
}
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters = 232;
constexpr int kWideTokens = 128;  // any width with one CTA an SM, the layout those budgets serve
// setmaxnreg trades only the registers a CTA was launched with: ptxas gives each thread
// 64K / threads rounded down to 8 (168 at 384), and setmaxnreg.inc (USETMAXREG.TRY_ALLOC) spins
// until the CTA's own warps have released enough. Budgets above that pool hang the kernel
// (prefill v14: four consumers asking 112 at 640 threads never started).
static_assert(kProducerRegisters + kConsumers * kConsumerRegisters <=
                  cta_threads(kWideTokens) / 128 * (65536 / cta_threads(kWideTokens) / 8 * 8),
              "the setmaxnreg budgets exceed the registers the CTA is launched with");
// wgmma fragment sets the consumers rotate (prefill_kernel.cuh): 3 keep two blocks' groups in
// flight while the next block is dequantized. Two CTAs per SM keep 2 (one group in flight): with
// 3 sets in a 96-register budget ptxas serialized the 64-token kernels' wgmma (only an info line,
// C7512 "insufficient register resources"; a WARPGROUP.DEPBAR.LE gsb0, 0x0 after each HGMMA in
// the SASS), with 2 it pipelines them in 80-96 registers. tests/sass/check_wgmma_pipelined.py
// fails the build's tests if any prefill kernel serializes.
SF_HOST_DEVICE constexpr int fragment_sets(int tokens) { return ctas_per_sm(tokens) == 1 ? 3 : 2; }
// Shared memory a CTA may use: an SM has 228 KB, of which each CTA's runtime reserve takes 1 KB,
// and one CTA may have 227 KB.
SF_HOST_DEVICE constexpr int cta_shared_budget(int tokens) {
  return ctas_per_sm(tokens) == 1 ? 227 * 1024 : (228 / 2 - 1) * 1024;
}

// Scale rows one k-block can need: group 16 gives 4 per 64 columns.
constexpr int kMaxMetaRows = 4;
// Per consumer: [scales | zero shifts | zero folds], each kMaxMetaRows rows x 64 weight rows x 2
// bytes (kMetaPartBytes). Symmetric weights keep the room of two parts, as before zero shifts
// existed, so their stage counts (measured, perf/prefill.md) stay as they were.
constexpr int kMetaPartBytes = kMaxMetaRows * 64 * 2;
SF_HOST_DEVICE constexpr int meta_bytes_per_consumer(bool zero_points) {
  return (zero_points ? 3 : 2) * kMetaPartBytes;
}

SF_HOST_DEVICE constexpr int block_bytes(int bits) { return 64 * 64 * bits / 8; }
// A stage: [activations: tokens x 128 B, swizzled] [weights: one block per consumer] [meta].
// Every part's size is a multiple of 1024, so each stage's activation tile stays 1024-aligned as
// the 128-byte swizzle requires.
SF_HOST_DEVICE constexpr int activation_stage_bytes(int tokens) { return tokens * 128; }
SF_HOST_DEVICE constexpr int stage_bytes(int bits, int tokens, bool zero_points) {
  return activation_stage_bytes(tokens) + kConsumers * block_bytes(bits) +
         kConsumers * meta_bytes_per_consumer(zero_points);
}
// Shared memory for a pipeline of `stages` stages: + 1024 because the dynamic shared memory base
// is only 16-byte aligned, + 256 for the barriers (two per stage, so at most 16 stages).
constexpr int kMaxStages = 16;
// Consumers keep up to two blocks' wgmma groups in flight, so they hold up to two stages besides
// the one they wait for: fewer than three stages would deadlock.
constexpr int kMinStages = 3;
SF_HOST_DEVICE constexpr int shared_bytes(int bits, int tokens, int stages, bool zero_points) {
  return stages * stage_bytes(bits, tokens, zero_points) + 1024 + 256;
}
// The deepest pipeline that fits the CTA's share of an H100/H200 SM (cta_shared_budget).
SF_HOST_DEVICE constexpr int max_stages(int bits, int tokens, bool zero_points) {
  return (cta_shared_budget(tokens) - 1024 - 256) / stage_bytes(bits, tokens, zero_points) <
                 kMaxStages
             ? (cta_shared_budget(tokens) - 1024 - 256) / stage_bytes(bits, tokens, zero_points)
             : kMaxStages;
}
// Default depth: as many stages as fit, at most 8 (SAILFISH_PREFILL_STAGES overrides).
SF_HOST_DEVICE constexpr int stage_count(int bits, int tokens, bool zero_points) {
  return max_stages(bits, tokens, zero_points) < 8 ? max_stages(bits, tokens, zero_points) : 8;
}
static_assert(stage_bytes(4, 128, false) == 16384 + 4096 + 2048, "int4, 128 tokens: 22 KB a stage");
static_assert(stage_count(8, 256, true) >= 4, "the deepest tile keeps four stages");
static_assert(shared_bytes(8, 256, stage_count(8, 256, true), true) <= 227 * 1024, "fits an SM");
static_assert(stage_count(8, 64, true) >= 4 &&
                  2 * shared_bytes(8, 64, stage_count(8, 64, true), true) + 2 * 1024 <=
                      228 * 1024,
              "two 64-token CTAs fit an SM with four stages each");

// Work units: (n tile, m tile, k split), numbered so that CTAs running at the same time share
// weights and activations in L2: n tiles are grouped into panels of kPanelTiles; inside a panel
// the n tile varies fastest, then the m tile; panels, then splits, last.
constexpr int kPanelTiles = 16;

struct UnitCoord {
  int n_tile, m_tile, split;
};

SF_HOST_DEVICE constexpr UnitCoord unit_coord(int64_t unit, int n_tiles, int m_tiles) {
  const int64_t per_split = int64_t(n_tiles) * m_tiles;
  const int split = static_cast<int>(unit / per_split);
  const int64_t rest = unit % per_split;
  const int64_t per_panel = int64_t(kPanelTiles) * m_tiles;
  const int panel = static_cast<int>(rest / per_panel);
  const int64_t in_panel = rest % per_panel;
  const int panel_width =
      n_tiles - panel * kPanelTiles < kPanelTiles ? n_tiles - panel * kPanelTiles : kPanelTiles;
  return UnitCoord{panel * kPanelTiles + static_cast<int>(in_panel % panel_width),
                   static_cast<int>(in_panel / panel_width), split};
}

// Each unit walks its k-range starting at a rotated k-block (then wraps around): units that run
// at the same time and share an operand (the tiles of one m tile share activations, those of one
// n tile share weights) then ask L2 for different lines instead of all for the same ones. The
// rotation depends only on the unit, so results are the same every run.
SF_HOST_DEVICE constexpr int k_rotation(UnitCoord u, int count) {
  return count > 0 ? static_cast<int>((int64_t(u.n_tile) * 3 + int64_t(u.m_tile) * 5) * 2 % count)
                   : 0;
}

// Token widths (wgmma N) with a kernel instance: narrow tiles serve M below 128 without computing
// rows of zeros (at M = 64 a 128-token tile does twice the tensor work the problem needs).
// The widths are the powers of two from kMinTokens to kMaxTokens.
constexpr int kMinTokens = 16;
constexpr int kMaxTokens = 256;
SF_HOST_DEVICE constexpr bool is_token_width(int64_t tokens) {
  return tokens >= kMinTokens && tokens <= kMaxTokens && (tokens & (tokens - 1)) == 0;
}

// Tile width and split-K depth: the pair with the least estimated time, from a cost model fitted
// to H200 measurements (docs/perf/prefill.md): a CTA needs step_ns(tokens) per k-block of its
// unit (500 ns with 128-token tiles, 720 ns with 256: a k-block step is bound inside the SM, not
// by memory, so it does not depend on how many CTAs run), units run in waves of sm_count, and
// splits > 1 add the fp32 partials' write and read-back (8 bytes per output per split) at about
// 3 TB/s.
// Worked examples, H200 (132 SMs), K = 4096 unless noted:
//   l3-8b.o (N 4096), M = 128: 32 tiles -> 4 splits (128 units); l3-8b.qkv (N 6144): 2 splits;
//   l3-70b.qkv (N 10240, K 8192), M = 128: 80 tiles -> 3 splits (240 units in two waves beat
//   one unsplit wave: 2 x 43 k-blocks against 128); M >= 1024: 256-token tiles, no split.
constexpr int kMinBlocksPerSplit = 4;
constexpr int kMaxSplits = 8;
constexpr double kPartialsBytesPerNs = 3000.0;

// Step times (ns per k-block of one CTA) by token width, H200, on the shapes large enough that
// launch and tail costs vanish (docs/perf/prefill.md, v7-v9). 128 and 256 tokens run one CTA per
// SM; 16-64 run two, each CTA stepping at 570-660 ns (so an SM retires a k-block about every
// 300 ns).
SF_HOST_DEVICE constexpr double step_ns(int tokens) {
  return tokens <= 16 ? 580.0 : tokens <= 32 ? 600.0 : tokens <= 64 ? 650.0
       : tokens <= 128 ? 500.0 : 720.0;
}

struct TileChoice {
  int tokens;
  int splits;
};

SF_HOST_DEVICE constexpr double estimate_ns(int64_t n_tiles, int64_t m, int64_t n_pad,
                                           int64_t k_blocks, int sm_count, int tokens,
                                           int splits) {
  const int64_t m_tiles = (m + tokens - 1) / tokens;
  const int64_t units = n_tiles * m_tiles * splits;
  const int64_t slots = int64_t(sm_count) * ctas_per_sm(tokens);
  const int64_t waves = (units + slots - 1) / slots;
  const int64_t steps = (k_blocks + splits - 1) / splits;
  const double partials_ns =
      splits > 1 ? double(splits) * double(m_tiles * tokens) * double(n_pad) * 8.0 /
                       kPartialsBytesPerNs
                 : 0.0;
  return double(waves) * double(steps) * step_ns(tokens) + partials_ns;
}

// forced_tokens: 0 lets the model pick the width too, else that width (is_token_width) is used.
SF_HOST_DEVICE constexpr TileChoice choose_tiles(int64_t n_tiles, int64_t m, int64_t n_pad,
                                                int64_t k_blocks, int sm_count,
                                                int forced_tokens = 0) {
  TileChoice best{0, 1};
  double best_ns = 0.0;
  for (int tokens = kMinTokens; tokens <= kMaxTokens; tokens *= 2) {
    if (forced_tokens != 0 && tokens != forced_tokens) continue;
    // A tile at least half empty never pays: the next narrower width does the same rows.
    if (forced_tokens == 0 && tokens > kMinTokens && m <= tokens / 2) continue;
    for (int splits = 1; splits <= kMaxSplits; ++splits) {
      if (splits > 1 && k_blocks / splits < kMinBlocksPerSplit) break;
      const double ns = estimate_ns(n_tiles, m, n_pad, k_blocks, sm_count, tokens, splits);
      // Ties keep the first tried: the narrower tile, which pads M to no more rows of zeros.
      if (best.tokens == 0 || ns < best_ns) {
        best_ns = ns;
        best = TileChoice{tokens, splits};
      }
    }
  }
  return best;
}

}  // namespace sailfish::prefill
