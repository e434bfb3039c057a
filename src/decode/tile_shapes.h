// The decode tier's tiles: what a CTA owns, the stages of its pipeline and their shared memory,
// the token tiles compiled. Usable on host and device, so CPU tests can check them.
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
// (warp_split_instances.h, wide_warps_pay; the "wide" instance).
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
// CUDA's limit on a grid's y and z dimensions: the decode grid's splits (y) and CTAs along M (z),
// the MoE expert GEMM's blocks (z).
constexpr int64_t kMaxGridYZ = 65535;
// The most tokens one launch serves: its CTAs along M are the grid's z dimension, at most
// kMaxGridYZ, of 64 tokens each (plan_decode refuses more).
constexpr int64_t kDecodeMaxM = kMaxGridYZ * kMaxTokenTiles * kTokensPerTile;

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
SF_HOST_DEVICE constexpr int warp_split_region_bytes(int stage, int stages) {
  return kWarpHeaderBytes + stages * stage;
}
// Where a stage holds 16-byte chunk `chunk` (columns 8 chunk .. 8 chunk + 7 of the block's 64) of
// activation row `row`: rows of 128 bytes after the weight block, the chunk XORed with row % 8, so
// that the eight rows one ldmatrix phase reads (one chunk of rows r .. r + 7) lie in eight
// different 16-byte bank groups. Rows 8 apart share a swizzle, so token tile t's rows sit 1 KB x t
// after tile 0's (the kernel's ldmatrix of full tiles takes that as an immediate, v23).
SF_HOST_DEVICE constexpr int warp_split_activation_offset(int bits, int row, int chunk) {
  return weight_stage_bytes(bits) + row * 128 + ((chunk ^ (row & 7)) << 4);
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

}  // namespace sailfish::decode
