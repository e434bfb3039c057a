// Decode tier kernel for M <= 32 tokens per CTA: every warp streams whole 64 x 64 blocks.
//
// The strip kernel (decode_kernel.cuh) gives each warp one n16 group of a block: 512 bytes of
// weights per warp and per block, so the per-block fixed work (copy issue, barrier, activation
// fragments, group bookkeeping) is paid for every 512 bytes, and on the H200 it was issue-bound
// at about 2 TB/s. Here the kWarpCount warps of a CTA (4, or 8 in the wide instance at one token
// tile: warp_split_instances.h, wide_warps_pay) split the CTA's k-range instead (the first seed's
// "warps split K contiguously"), and each warp owns all four n16 groups of its blocks:
//   - a lane copies its four (int4) or eight (int8) 16-byte runs of a block into its own slot
//     and reads back only those ("self-slot" staging, cp.async, kStages deep per warp, or 3 at
//     3-4 token tiles, 6 at one and 5 at two where the plan asks:
//     warp_split_instances.h, warp_split_deep_stages);
//   - the activation slice and scale rows of the block ride in the same commit group; ldmatrix
//     and the scale loads read bytes other lanes of the same warp copied, so each stage needs a
//     __syncwarp after the wait, and no CTA barrier anywhere in the mainloop;
//   - one pair of ldmatrix.x4 per k32 serves all four n16 groups (16 mma per block and token tile).
// With kTiles <= 2 the fp32 partial sums are scaled once per group (decode_kernel.cuh explains
// why) and the conversions skip the bias subtraction (dequant.cuh: the offset forms;
// docs/DECODE.md); zero points then enter the group flush as a multiple of the offset correction
// (dequant.cuh: offset_zero_coefficient). With 3-4 token tiles scales (and zero folds) apply per
// pair with one hfma2, zero shifts in the conversion's subtraction.
// At the end the warps' sums meet in shared memory and each warp adds its share of the
// fragments (none for warps 4-7 of the wide instance) in warp order (deterministic) and runs the
// epilogue (store, red.global or split partials); with the cluster epilogue the split CTAs of the
// strip then add their sums through distributed shared memory (warp_split_epilogue.cuh).
//
// Shared memory, sized at plan time to what the problem reads (tile_shapes.h,
// warp_split_stage_bytes): kWarpCount * (128 + stages * (block + act_rows * 128 + meta_rows * 128
// (x3 with zero points))), 37 KB for int4, M = 1, group 128, symmetric; at most
// warp_split_max_shared_bytes.
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/dequant.cuh"
#include "common/ptx/cluster.cuh"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/griddepcontrol.cuh"
#include "common/ptx/ldmatrix.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/mma_sync.cuh"
#include "common/static_for.h"
#include "common/warp_uniform.cuh"
#include "decode/config.h"
#include "decode/decode_kernel.cuh"
#include "decode/moe_block_rank.cuh"
#include "decode/warp_split_epilogue.cuh"
#include "decode/warp_split_flush.cuh"
#include "decode/warp_split_slice.cuh"
#include "decode/warp_split_work.h"

namespace sailfish::decode {

// kZeroPoints: the weight has zero points (a compile-time choice, so the symmetric mainloop carries
// no branch on it). kStageCount: stages per warp (tile_shapes.h: kStages, or warp_split_deep_stages
// at 1-2 token tiles); at 3-4 token tiles the most, with p.warp_stages saying how many run.
// kStreamK: the Stream-K grid (stream_k_grid.h: stream_k_plan; 1-2 token tiles): cluster blockIdx.x
// of p.splits CTAs (rank blockIdx.y) owns p.stream_k_strips strips, and warps walk flat runs of
// them (below).
// No minimum-CTAs argument in the launch bounds: even an explicit 1 moves ptxas off its default
// allocation (one token tile 127 -> 130 registers, so 3 CTAs an SM instead of 4; two tiles
// 166 -> 182, 2 instead of 3), and such a build ran up to 1.24x the default's time
// (docs/perf/decode.md, v34).
// kMoe: the MoE instance (DecodeParams::moe_block_experts): each M group takes its sorted block's
// expert weight, on the split grid.
template <typename T, int kBits, int kTiles, bool kZeroPoints, int kStageCount = kStages,
          bool kStreamK = false, int kWarpCount = kWarpSplitWarps, bool kMoe = false>
__global__ void __launch_bounds__(kWarpCount * 32)
    decode_warp_split_kernel(const __grid_constant__ DecodeParams p) {
  constexpr int kW = weight_stage_bytes(kBits);
  constexpr int kRunBytes = kBits * 4;  // 16 (int4) or 32 (int8) bytes per (n16 group, lane)
  constexpr int kWordsPerGroup = kBits;  // words of one n16 group's run
  constexpr bool kScaleSums = kTiles <= 2;
  // Stages per warp: kStageCount, or 3 or 4 at 3-4 token tiles (p.warp_stages,
  // warp_split_instances.h).
  constexpr bool kStagesVary = warp_split_stages_vary(kTiles);
  static_assert(!kStagesVary || kStageCount == kStages, "3-4 token tiles vary kStages at run time");
  const int stages = kStagesVary ? p.warp_stages : kStageCount;
  static_assert(kTiles <= 4, "accumulators for 4 n16 groups x kTiles tiles must fit registers");
  static_assert(!kStreamK || kTiles <= 2, "Stream-K flushes scaled sums at tile boundaries");
  static_assert(!kStreamK || kWarpCount == kWarpSplitWarps, "Stream-K is built with four warps");
  static_assert(!kMoe || !kStreamK, "MoE blocks run on the split grid");
  // A CTA with kTiles token tiles holds at least (kTiles - 1) * 8 + 1 activation rows a stage
  // (token_tiles_for).
  constexpr int kMinStageBytes = kW + ((kTiles - 1) * kTokensPerTile + 1) * 128;
  static_assert(4 * kTiles * 4 * 32 * 4 <=
                    kWarpHeaderBytes + warp_split_min_stages(kTiles) * kMinStageBytes,
                "the cross-warp reduction reuses a warp's region");
  extern __shared__ __align__(16) uint8_t smem[];

  const int warp = gpu::warp_uniform(threadIdx.x / 32), lane = threadIdx.x % 32;
  const int split = blockIdx.y;
  const int token0 = blockIdx.z * kTiles * kTokensPerTile;
  // MoE: the expert of sorted block blockIdx.z; past the blocks the routing filled (-1), nothing
  // to compute. The CTAs of a cluster share blockIdx.z, so a cluster leaves whole, before any of
  // its barriers. The align step writes it, so a MoE CTA waits for the previous grid first (under
  // programmatic dependent launch only the launch overlaps it, not the weight stream; the later
  // wait below then returns at once).
  [[maybe_unused]] int64_t expert = 0;
  if constexpr (kMoe) {
    gpu::wait_for_previous_grid();
    expert = p.moe_self_align != 0 ? detail::moe_rank_block<T, kWarpCount * 32>(p, smem)
                                   : p.moe_block_experts[blockIdx.z];
    if (expert < 0) return;
  }
  // The warp's blocks (warp_split_work.h): split grid, strip blockIdx.x and split blockIdx.y;
  // Stream-K, cluster blockIdx.x of p.splits CTAs (rank blockIdx.y), whose runs may cross strips.
  const WarpSplitWork work =
      kStreamK ? warp_split_stream_k_work<kWarpCount>(p.k_blocks, p.splits, p.n_pad,
                                                      p.stream_k_strips, blockIdx.x, split, warp)
               : warp_split_work<kWarpCount>(p.k_blocks, p.splits, blockIdx.x, split, warp);
  const int first_strip = work.first_strip, kb_begin = work.kb_begin, num_blocks = work.num_blocks;
  const int strip = first_strip;  // the split grid's strip
  // Warp region: 128-byte header (its first 16 bytes zero: the activation rows beyond M), then
  // `stages` stages of [block | act_rows x 128 B | meta_rows x 128 B scales (| as many zero shifts
  // | as many folds)].
  const int stage_bytes = p.warp_stage_bytes;
  const int region_bytes = warp_split_region_bytes(stage_bytes, stages);
  uint8_t* region = smem + warp * region_bytes;
  const uint32_t region_address = gpu::shared_address(region);
  const uint32_t zero_chunk = region_address;
  const uint32_t stages_address = region_address + kWarpHeaderBytes;
  // Epilogue::kCluster's push form (split grid, 1-2 token tiles): the receive barrier of each rank
  // that owns fragments (detail::cluster_push_and_store), initialized and made visible to the
  // cluster before any rank can send to it. The other half of this arrive is waited for in the
  // epilogue, long after it completed.
  const bool clustered = !kStreamK && p.epilogue == Epilogue::kCluster;  // uniform
  constexpr bool kPushBuilt = !kStreamK && kTiles <= kClusterPushMaxTiles;
  const bool push = kPushBuilt && clustered && p.cluster_push != 0;  // uniform
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (push) {
    if (cluster_push_owned(split, p.splits, kTiles) > 0 && threadIdx.x == 0) {
      gpu::mbarrier_init(gpu::shared_address(smem + kWarpCount * region_bytes) +
                             cluster_receive_slot_bytes(p.splits, kTiles),
                         1);
      gpu::fence_barrier_init();
    }
    gpu::cluster_arrive_relaxed();
  }
#endif
  constexpr bool has_zero = kZeroPoints;
  const int meta_rows = meta_rows_for(p.group_shift);
  const int meta_offset = kW + p.act_rows * 128;  // within a stage
  const int shift_offset = meta_offset + meta_rows * 128;
  const int fold_offset = shift_offset + meta_rows * 128;
  const T* scales = static_cast<const T*>(p.scales);
  const uint16_t* shifts = p.zero_shift;
  const T* folds = static_cast<const T*>(p.zero_fold);
  if constexpr (kMoe) {
    scales += expert * p.moe_meta_stride;
    if constexpr (kZeroPoints) {  // null planes otherwise
      shifts += expert * p.moe_meta_stride;
      folds += expert * p.moe_meta_stride;
    }
  }

  // Copy cursors: blocks are issued in order, so each issue copies from the cursors and then
  // advances them by one block, instead of computing its addresses from the block index (the loop
  // is issue bound: v5 took address arithmetic out of it, v10b the rest). Every copy is predicated
  // on `issue` rather than branched around: ptxas puts three no-op loads before each cp.async that
  // follows a branch.
  const uint8_t* weight_cursor =
      p.codes + (int64_t(strip) * p.k_blocks + kb_begin) * kW + lane * kRunBytes;
  if constexpr (kMoe) weight_cursor += expert * p.moe_code_stride;
  int meta_kb = kb_begin;  // the k-block whose scale rows the next issue copies
  // Activations: lane copies 16-byte chunk (lane % 8) of rows lane / 8 + 4u, u < kActCopies, when
  // the row is below M; ldmatrix reads the rows at or beyond M from the zero chunk. Eight lanes
  // read a row's 128 bytes: v38 gave each lane a run of chunks in one row instead (one pointer,
  // [cursor + 16u], no 64-bit adds), and with a copy's lanes spread over 16 rows instead of 4 it
  // ran 1.1-1.5x slower at M = 16 and 1.6-2.6x at M = 32 (docs/perf/decode.md).
  constexpr int kActCopies = kTiles * kTokensPerTile * 8 / 32;
  const int act_chunk = lane & 7;
  const int valid_rows = min(p.m - token0, kTiles * kTokensPerTile);
  const T* const act = static_cast<const T*>(p.a);
  const T* act_cursor =
      act + int64_t(token0 + lane / 8) * p.lda + int64_t(kb_begin) * 64 + act_chunk * 8;
  // The lean loop (tile_shapes.h, warp_split_reads_whole_blocks; four token tiles): no K tail test,
  // since plan_decode then copies activations whose K is not a multiple of 64 into a workspace
  // zero-padded to k_pad, and a write cursor that takes the read cursor's old value (run_block).
  // H200 A/B (v38): M = 32 0.977x int4, 0.956x with zero points. At one and two tiles the same
  // loop (3-5 instructions a block fewer) ran 0.995-1.004x, so those keep the tail test and
  // spare odd-K shapes the copy's launch; at three tiles it took ptxas 122 -> 128 registers
  // with a spill. The column stays for the tail test and for the strip edges of Stream-K.
  constexpr bool kLeanLoop = warp_split_reads_whole_blocks(kTiles);
  [[maybe_unused]] int act_column = kb_begin * 64 + act_chunk * 8;
  const int64_t act_rows_step = 4 * p.lda;  // from row lane / 8 + 4u to + 4(u + 1)
  uint32_t act_offset[kActCopies];  // within a stage's activation rows (XOR-swizzled chunk)
  bool act_row_valid[kActCopies];
  // MoE: a block's rows are scattered over A under the fused gather (DecodeParams::
  // moe_gather_rows), so each copy has a row offset of its own from a column cursor (32-bit:
  // plan_moe fuses only where A holds under 2^32 elements), and any row may be a padding slot,
  // whose copies never run: its chunks are zeroed in every stage once, before the first copy, so
  // ldmatrix reads every row of a stage as the dense instances read full tiles.
  [[maybe_unused]] uint32_t act_row_offset[kMoe ? kActCopies : 1];
  [[maybe_unused]] const T* moe_act_cursor = act + int64_t(kb_begin) * 64 + act_chunk * 8;
#pragma unroll
  for (int u = 0; u < kActCopies; ++u) {
    const int row = lane / 8 + 4 * u;
    act_offset[u] = warp_split_activation_offset(kBits, row, act_chunk);
    act_row_valid[u] = row < valid_rows;
    if constexpr (kMoe) {
      uint32_t source = token0 + row;  // the gathered slab's row, or the fused gather's below
      if (p.moe_gather_rows != 0) {
        const int32_t choice = act_row_valid[u] ? detail::moe_choice_of(p, token0 + row) : -1;
        act_row_valid[u] = choice >= 0;
        source = choice >= 0 ? static_cast<uint32_t>(choice / p.moe_choices_per_row) : 0u;
      }
      act_row_offset[u] = source * static_cast<uint32_t>(p.lda);
      if (!act_row_valid[u]) {
        for (int s = 0; s < stages; ++s) {
          *reinterpret_cast<uint4*>(region + kWarpHeaderBytes + s * stage_bytes + act_offset[u]) =
              make_uint4(0, 0, 0, 0);
        }
      }
    }
  }
  // Every token tile but the last is full (token_tiles_for: valid_rows > (kTiles - 1) * 8), so
  // only the copies of the last tile's rows test validity (v23: six predicates a block fewer at
  // 4 tiles). Copy u holds rows 4u to 4u + 3.
  constexpr int kAlwaysValidCopies = (kTiles - 1) * kTokensPerTile / 4;
  // Scale (shift, fold) rows: lane copies chunk lane % 8 of row lane / 8 of the block's rows.
  const uint32_t meta_row_elements = static_cast<uint32_t>(p.n_pad);
  // Stream-K: advanced one strip (64 columns) when the copies cross into the next strip.
  uint32_t meta_lane = (lane / 8) * meta_row_elements + strip * 64 + (lane % 8) * 8;
  const bool copies_meta = lane < meta_rows * 8;

  // The weights are read once per call: evict-first keeps them from pushing what is read again
  // (activations, scales, the next kernel's inputs) out of the L2, and streamed faster at 1-2
  // token tiles (warp_split_instances.h, warp_split_evicts_weights_first). The issue asked for the
  // hint to be tested on sm_90 (a public kernel had crashed with the createpolicy form): every GPU
  // test of these instances and compute-sanitizer run it.
  // Not on the Stream-K grid (opt-in, not measured with it), whose loops it lengthened by 2-3%.
  constexpr bool kEvictFirst = warp_split_evicts_weights_first(kTiles) && !kStreamK;
  [[maybe_unused]] uint64_t weight_policy = 0;
  if constexpr (kEvictFirst) weight_policy = gpu::createpolicy_evict_first();
  auto issue_weights = [&](uint32_t stage, bool issue) {
    // Run (j, c) of the lane sits at the same offset in the block and in its slot.
    gpu::static_for<4 * (kRunBytes / 16)>([&](auto run) {
      constexpr int j = decltype(run)::value / (kRunBytes / 16);
      constexpr int c = decltype(run)::value % (kRunBytes / 16);
      constexpr int offset = j * 32 * kRunBytes + 16 * c;
      if constexpr (kEvictFirst) {
        gpu::cp_async_16_if_at_hint<offset>(issue, stage + lane * kRunBytes, weight_cursor,
                                            weight_policy);
      } else {
        gpu::cp_async_16_if_at<offset>(issue, stage + lane * kRunBytes, weight_cursor);
      }
    });
    // 32-bit element offset (PackedGeometry::make keeps n_pad x k_pad under 2^34, so the scales
    // hold at most 2^30 elements): the address is one wide multiply-add rather than 64-bit
    // shifts and adds.
    const uint32_t src =
        meta_lane + static_cast<uint32_t>((meta_kb * 64) >> p.group_shift) * meta_row_elements;
    gpu::cp_async_16_if(issue && copies_meta, stage + meta_offset + lane * 16, scales + src);
    if constexpr (has_zero) {
      gpu::cp_async_16_if(issue && copies_meta, stage + shift_offset + lane * 16, shifts + src);
      gpu::cp_async_16_if(issue && copies_meta, stage + fold_offset + lane * 16, folds + src);
    }
    weight_cursor += kW;  // strip-major codes: the next strip's first block follows its last
    ++meta_kb;
    if constexpr (kStreamK) {
      if (meta_kb == p.k_blocks) {
        meta_kb = 0;
        meta_lane += 64;
      }
    }
  };
  auto issue_activations = [&](uint32_t stage, bool issue) {
    // K tail: zero-filled. A copy of 0 source bytes reads nothing, so the cursor needs no clamp
    // (a select of the 64-bit pointer per copy). None in the lean loop.
    const int src_bytes = kLeanLoop || act_column < p.k ? 16 : 0;
    if constexpr (kMoe) {
#pragma unroll
      for (int u = 0; u < kActCopies; ++u) {
        gpu::cp_async_16_if(issue && act_row_valid[u], stage + act_offset[u],
                            moe_act_cursor + act_row_offset[u], src_bytes);
      }
      moe_act_cursor += 64;
    } else {
      const T* src = act_cursor;
#pragma unroll
      for (int u = 0; u < kActCopies; ++u, src += act_rows_step) {
        const bool valid = u < kAlwaysValidCopies || act_row_valid[u];
        gpu::cp_async_16_if(issue && valid, stage + act_offset[u], src, src_bytes);
      }
    }
    act_cursor += 64;
    if constexpr (!kLeanLoop || kStreamK) act_column += 64;
    if constexpr (kStreamK) {
      if (act_column >= p.k_blocks * 64) {  // the next strip starts again at column 0
        act_cursor -= p.k_blocks * 64;
        act_column -= p.k_blocks * 64;
      }
    }
  };
  if (lane == 0) *reinterpret_cast<uint4*>(region) = make_uint4(0, 0, 0, 0);
  // ldmatrix row addresses: lane supplies row tt * 8 + lane % 8 of 16-byte chunk 4h + lane / 8
  // (k16 slices 2h, 2h + 1), within the stage's activation rows, or the zero chunk at or beyond M.
  bool row_valid[kTiles];
  uint32_t ldm_offset[kTiles][2];
#pragma unroll
  for (int tt = 0; tt < kTiles; ++tt) {
    const int row = tt * kTokensPerTile + (lane & 7);
    row_valid[tt] = row < valid_rows;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int chunk = 4 * h + (lane >> 3);
      ldm_offset[tt][h] = warp_split_activation_offset(kBits, row, chunk);
    }
  }

  // Scaled sums skip the bias subtraction of the dequantization: the mma accumulates
  // (q - bias + offset) * a, and `correction` accumulates -offset * sum(a) per token, which the
  // group flush adds back (dequant.cuh: OffsetForm). int4: four packed subtractions per word
  // become a quarter mma per word (v5); int8: the fp32 round trip of bf16 becomes the int4 nibble
  // code (v8), then each byte's seven low bits and top bit (v55); fp16 int4: one shift a word
  // instead of three, with offsets that differ between the k 0-7 and k 8-15 halves of a slice, so
  // the correction is -sum(a) per half and the flush weights the halves (v16). Zero points: the flush also adds the correction times a per-column
  // coefficient, instead of a subtraction and a scale-and-fold hfma2 per weight pair (v15).
  // The correction mma (v10b) takes the activations as its A operand: the four registers of one
  // ldmatrix.x4 (slices 2h and 2h + 1, 8 k each per matrix) read as an A fragment put token g's
  // k 0-7 of both slices in row g and its k 8-15 in row g + 8, k-labels scrambled. Against a B
  // fragment of -unit (OffsetForm) where B rows k < 8 feed only the even columns and k >= 8 the odd
  // ones, the result holds, for token g, slice 2h in columns 2t (rows g and g + 8: c[0] + c[2],
  // the k 0-7 and k 8-15 halves) and slice 2h + 1 in columns 2t + 1 (c[1] + c[3]). One mma serves
  // two slices with no register moves, and a group that ends between them (groups of 16) takes
  // only the first slice's part. Where the flush adds the correction by mma
  // (warp_split_flush.cuh: corrects_by_mma), only columns 0 and 1 are fed, so the sums sit in
  // lane 4g alone and lanes 4g + 1 .. 4g + 3 hold zero; elsewhere the flush moves them with two
  // shuffles, and the constant stays as it was (columns 0 and 1 only cost ptxas 4-8 instructions
  // in some two-tile loops). Before v10b, one mma per slice against a 4-register -offset A
  // fragment, which ptxas rebuilt before every use (4 instructions a slice).
  constexpr bool offset_dequant = kScaleSums;
  using Form = gpu::OffsetForm<T, kBits>;
  constexpr uint32_t kNegativeOffset = Form::kNegativeUnitPair;
  // B fragment: lane (g, t) holds B[k = 2t, 2t+1][n = g] and B[k = 2t+8, 2t+9][n = g].
  constexpr bool kCorrectionInOneLane = detail::corrects_by_mma<T, kBits, kTiles, kZeroPoints>();
  const uint32_t offset_low_k = kCorrectionInOneLane ? (lane >> 2 == 0 ? kNegativeOffset : 0u)
                                                     : ((lane >> 2) & 1 ? 0u : kNegativeOffset);
  const uint32_t offset_high_k = kCorrectionInOneLane ? (lane >> 2 == 1 ? kNegativeOffset : 0u)
                                                      : ((lane >> 2) & 1 ? kNegativeOffset : 0u);
  float acc[4][kTiles][4], total[4][kTiles][4], correction[kTiles][4];
#pragma unroll
  for (int tt = 0; tt < kTiles; ++tt) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      correction[tt][i] = 0.0f;
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[j][tt][i] = total[j][tt][i] = 0.0f;
    }
  }
  int current_group = -1;
  float group_scale[4][2];  // [n16 group][row g, g + 8]
  // Zero points: offset_zero_coefficient of the same columns (unused without).
  [[maybe_unused]] float group_zero[4][2];
  // first_slice_only: the group ends between the two slices of the current pair (groups of 16).
  // zero_sums: zero acc and the correction for the next group. With kGroupsStartFromZero, groups
  // of 64 or more need not: a group starts with a block, whose first slice's mma then start from
  // zero instead. At two token tiles the 20 register-pair zeroings a group held 5% of the stall
  // samples, most of it waiting for the ALU pipe that the conversions keep busy; there the zero
  // start ran 0.970-1.033x the time (geometric mean 0.995 int4, 0.991 int8, M = 16). At one tile
  // (1.004 int4, 1.019 int8 at M = 1) and with zero points (1.016) it lost, so those keep the
  // zeroing (docs/perf/decode.md, v35).
  constexpr bool kGroupsStartFromZero = kTiles == 2 && !kZeroPoints;
  // The fused group start (run_blocks, groups of 64 or more): the block that starts a group
  // takes one branch, whose taken side holds the last group's flush, the new group's scale loads
  // and the first slice's conversions and mma. Before, the flush had a branch of its own ahead of
  // the conversions, so ptxas could not overlap its FMA-pipe adds with their ALU work (the busier
  // pipe). H200 A/B (docs/perf/decode.md, v36), geometric means of bf16 at group 128 unless
  // said: two tiles 0.979x int4 (M = 9-16, 0.958-0.993), 0.977x int8, 0.960x at group 64, fp16
  // int4 1.001x; one tile 0.976x int4 (M = 1-8), 0.985x int8, 0.974x with zero points, 0.949x at
  // group 64. Zero points at two tiles ran 0.999x (0.972-1.032) and keep the separate flush.
  constexpr bool kFuseGroupStarts = kScaleSums && (kTiles == 1 || !kZeroPoints);
  // With kFuseGroupStarts a tile's first group start runs the flush too, on zero sums, which
  // must add zero: the scales it multiplies are zeroed before a tile, so none is left from
  // another strip (a non-finite scale times 0 is NaN).
  auto zero_group_scales = [&]() {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      group_scale[j][0] = group_scale[j][1] = 0.0f;
      if constexpr (has_zero) group_zero[j][0] = group_zero[j][1] = 0.0f;
    }
  };
  if constexpr (kFuseGroupStarts) zero_group_scales();
  auto flush_group = [&](bool first_slice_only, bool zero_sums) {
    detail::flush_group_sums<T, kBits, kTiles, kZeroPoints>(
        total, acc, correction, group_scale, group_zero, lane, first_slice_only, zero_sums);
  };

  // Stream-K: the strip and k-block of the block being computed. At a strip's last k-block the
  // run's sums of that tile are complete: stored if the run covered the whole tile, else (the
  // run's first tile) parked in the warp's slot-0 region past the stages for the cluster reduction.
  [[maybe_unused]] int tile_strip = first_strip, block_kb = kb_begin;
  auto finish_tile = [&]() {
    if (current_group >= 0) flush_group(false, true);
    current_group = -1;  // the next tile's groups count from 0 again
    if constexpr (kFuseGroupStarts) zero_group_scales();
    if (tile_strip != first_strip || kb_begin == 0) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int tt = 0; tt < kTiles; ++tt) {
          detail::store_fragment<T>(p, total[j][tt], tile_strip * 64 + j * 16,
                                    token0 + tt * kTokensPerTile, lane, 0);
        }
      }
    } else {
      detail::park_sums<kTiles>(
          reinterpret_cast<float*>(smem + kWarpCount * region_bytes +
                                   warp * stream_k_park_bytes(kTiles)),
          total, lane);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int tt = 0; tt < kTiles; ++tt) {
#pragma unroll
        for (int i = 0; i < 4; ++i) total[j][tt][i] = 0.0f;
      }
    }
  };

  // The prologue fills stages - 1 stages: the weights of all of them first, before waiting for
  // the previous kernel (programmatic dependent launch: the weight stream starts while it
  // drains), then their activations, one commit group per stage (decode_kernel.cuh:
  // fill_pipeline, whose group accounting this keeps). Each loop trip refills one stage and
  // commits one group, so wait_group<stages - 2> always means "stage i has landed".
#pragma unroll
  for (int i = 0; i < kStageCount - 1; ++i) {
    if (!kStagesVary || i < stages - 1) {
      issue_weights(stages_address + i * stage_bytes, i < num_blocks);
    }
  }
  gpu::wait_for_previous_grid();
#pragma unroll
  for (int i = 0; i < kStageCount - 1; ++i) {
    if (!kStagesVary || i < stages - 1) {
      issue_activations(stages_address + i * stage_bytes, i < num_blocks);
      gpu::cp_async_commit();
    }
  }
  gpu::allow_next_grid();

  const int row_g = lane / 4;
  // Stage cursors (offsets from the warp's first stage), advanced with compare-and-wrap.
  const int stages_end = stages * stage_bytes;
  int read_offset = 0, write_offset = (stages - 1) * stage_bytes;
  // The steady loop (v37): the blocks that refill a stage run in a loop of their own, ahead of
  // the last stages - 1 blocks, which refill none. The copies then lose the refill test from their
  // predicates and the drain loop has no copies at all, and ptxas schedules the steady loop
  // tighter than the count alone says (bf16 int4 main loop, tests/sass/loop_budget.json: one tile
  // 286 -> 282 instructions, two 364 -> 354, three 412 -> 383). H200 A/B (docs/perf/decode.md,
  // v37), geometric means at group 128 unless said: int4 bf16 M = 1-8 0.981x, M = 16 0.964x,
  // M = 24 0.957x; fp16 0.977x and 0.964x; int8 0.995x and 0.997x; group 64 0.985x and 0.966x,
  // group 32 0.945-0.969x; zero points at one tile 0.972x, at three 0.982x. Not at four tiles,
  // which ran 1.016-1.093x slower, nor with zero points at two tiles and 4 stages (168 -> 201
  // registers, so 2 CTAs an SM instead of 3: up to 1.09x slower), nor on the Stream-K grid, whose
  // one-tile build got a stack frame (and which no default plan launches).
  constexpr bool kSteadyLoop =
      !kStreamK && kTiles <= 3 && !(kZeroPoints && kTiles == 2 && kStageCount == kStages);
  // The mainloop, compiled twice: for groups of 64 columns or more (every block lies in one group,
  // its scale row is row 0) and for groups of 16 or 32 (a group can end at any slice). The test
  // runs once per CTA; inside the slice loop it had cost a branch, a NOP and a WARPSYNC per slice,
  // and 10% of the loop's stall samples sat on the branch targets (v11, docs/perf/decode.md).
  // Blocks [i_begin, i_end) of the warp; block i is k-block kb_offset + i of its strip.
  auto run_blocks = [&](auto large_groups, int i_begin, int i_end, int kb_offset) {
    constexpr bool kLargeGroups = decltype(large_groups)::value;
    // Block i. refill: whether it refills a stage, a bool_constant where the loop knows.
    auto run_block = [&](int i, auto refill) {
      if (!kStagesVary || stages == kStageCount) {
        gpu::cp_async_wait<kStageCount - 2>();
      } else {
        gpu::cp_async_wait<kWarpSplitFewStages - 2>();
      }
      // NOTE: makes the stage's activation and scale bytes (copied by other lanes) and the zero
      // chunk visible to the whole warp, and guarantees no lane still reads the slot the next copy
      // overwrites.
      __syncwarp();
      issue_weights(stages_address + write_offset, refill);
      issue_activations(stages_address + write_offset, refill);
      gpu::cp_async_commit();

      const uint8_t* stage = region + kWarpHeaderBytes + read_offset;
      const uint32_t stage_address = stages_address + read_offset;
      uint32_t words[4][kWordsPerGroup];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int c = 0; c < kRunBytes / 16; ++c) {
          const uint4 v =
              *reinterpret_cast<const uint4*>(stage + (j * 32 + lane) * kRunBytes + 16 * c);
          words[j][4 * c + 0] = v.x;
          words[j][4 * c + 1] = v.y;
          words[j][4 * c + 2] = v.z;
          words[j][4 * c + 3] = v.w;
        }
      }
      const T* meta_scales = reinterpret_cast<const T*>(stage + meta_offset);
      // Unused in some instances (no zero points; per-pair scaling).
      [[maybe_unused]] const uint16_t* meta_shifts =
          reinterpret_cast<const uint16_t*>(stage + shift_offset);
      [[maybe_unused]] const T* meta_folds = reinterpret_cast<const T*>(stage + fold_offset);
      [[maybe_unused]] const int kb = kb_offset + i;

#pragma unroll
      for (int sp = 0; sp < 4; sp += 2) {
        uint32_t b[kTiles][4];
        detail::load_activation_fragments<kTiles>(stage_address, ldm_offset, row_valid, sp / 2,
                                                  zero_chunk, b);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int s = sp + half;
          // The scales (and zero-point coefficients) of the group that starts at scale row `row`.
          auto load_group_scales = [&](int row) {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const int column = row * 64 + j * 16 + 8 * h + row_g;
                group_scale[j][h] = static_cast<float>(meta_scales[column]);
                if constexpr (has_zero) {
                  group_zero[j][h] = gpu::offset_zero_coefficient<T, kBits>(
                      group_scale[j][h], meta_shifts[column], meta_folds[column]);
                }
              }
            }
          };
          // Whether a group starts here (uniform across the warp); if so, flushes the last one.
          auto enter_group = [&](int group, int row) {
            if (group == current_group) return false;
            if (current_group >= 0) flush_group(half == 1, true);
            current_group = group;
            load_group_scales(row);
            return true;
          };
          // Groups of 64 or more start at a block's first slice; with kFuseGroupStarts that
          // block's flush sits in the slice's own branch (offset_slice below).
          constexpr bool kFusedGroupStart = kLargeGroups && kFuseGroupStarts;
          if constexpr (kScaleSums && !kFusedGroupStart) {
            if constexpr (kLargeGroups) {
              if (s == 0) enter_group(kb >> (p.group_shift - 6), 0);
            } else {
              // slice_scale_row without its >= 6 test.
              enter_group((kb * 64 + 16 * s) >> p.group_shift, (16 * s) >> p.group_shift);
            }
          }
          if constexpr (offset_dequant) {
            // The slice's mma, compiled twice: from_zero for a group's first slice, where each
            // sum's first mma ignores the old accumulators (mma_m16n8k16_zero_c). One branch a
            // block picks the copy; a select per mma would issue each of them twice.
            auto offset_slice = [&](auto from_zero) {
              constexpr bool kFromZero = decltype(from_zero)::value;
#pragma unroll
              for (int j = 0; j < 4; ++j) {
                detail::offset_slice_column<T, kBits, kTiles, kFromZero>(acc[j], words[j], s, half,
                                                                         b);
              }
              if (half == 0) {  // after enter_group: a new group starts with this pair's correction
#pragma unroll
                for (int tt = 0; tt < kTiles; ++tt) {
                  detail::slice_mma<T, kFromZero>(correction[tt], b[tt], offset_low_k,
                                                  offset_high_k);
                }
              }
            };
            if constexpr (kFusedGroupStart) {
              // The group's first slice: flush, scales, then the slice, in one basic block (with
              // kGroupsStartFromZero the flush leaves the sums to the slice's zero-C mma).
              const int group = kb >> (p.group_shift - 6);
              if (s == 0 && group != current_group) {
                flush_group(false, !kGroupsStartFromZero);
                current_group = group;
                load_group_scales(0);
                offset_slice(std::bool_constant<kGroupsStartFromZero>{});
              } else {
                offset_slice(std::false_type{});
              }
            } else {
              offset_slice(std::false_type{});
            }
          } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const int row =
                  (kLargeGroups ? 0 : (16 * s) >> p.group_shift) * 64 + j * 16 + row_g;
              detail::scaled_slice_column<T, kBits, kTiles, kZeroPoints>(
                  total[j], words[j], s, half, b, meta_scales, meta_shifts, meta_folds, row);
            }
          }
        }
      }
      // Block i + 1 refills the slot block i read: the lean loop takes the read cursor's old
      // value for the write cursor instead of a compare-and-wrap of its own.
      if constexpr (kLeanLoop) write_offset = read_offset;
      read_offset += stage_bytes;
      if (read_offset == stages_end) read_offset = 0;
      if constexpr (!kLeanLoop) {
        write_offset += stage_bytes;
        if (write_offset == stages_end) write_offset = 0;
      }
    };
    if constexpr (kSteadyLoop) {
      // Block i refills a stage where i + stages - 1 < num_blocks.
      const int steady_end = max(i_begin, min(i_end, num_blocks - stages + 1));
      for (int i = i_begin; i < steady_end; ++i) run_block(i, std::true_type{});
      for (int i = steady_end; i < i_end; ++i) run_block(i, std::false_type{});
    } else {
      for (int i = i_begin; i < i_end; ++i) run_block(i, i + stages - 1 < num_blocks);
    }
  };
  // Stream-K: one run_blocks a tile the run touches, so the tile's end (finish_tile) sits outside
  // the block loop; inside it, finish_tile's state had cost ptxas registers it took back with
  // special-register reads and a spill in every trip (251 instructions a block against 203).
  auto mainloop = [&](auto large_groups) {
    if constexpr (kStreamK) {
      for (int i = 0; i < num_blocks;) {
        const int tile_blocks = min(num_blocks - i, p.k_blocks - block_kb);
        run_blocks(large_groups, i, i + tile_blocks, block_kb - i);
        i += tile_blocks;
        block_kb += tile_blocks;
        if (block_kb == p.k_blocks) {
          finish_tile();
          block_kb = 0;
          ++tile_strip;
        }
      }
    } else {
      run_blocks(large_groups, 0, num_blocks, kb_begin);
    }
  };
  if (p.group_shift >= 6) {
    mainloop(std::true_type{});
  } else {
    mainloop(std::false_type{});
  }
  gpu::cp_async_wait<0>();
  if (kScaleSums && current_group >= 0) flush_group(false, false);
  if constexpr (kStreamK) {
    __syncwarp();  // no lane still reads the stages the sums overwrite
    // The run ends inside a tile: its sums of that tile go to slot 1, the warp's own region.
    if (num_blocks > 0 && block_kb != 0) {
      detail::park_sums<kTiles>(reinterpret_cast<float*>(region), total, lane);
    }
    detail::stream_k_reduce_and_store<T, kTiles>(p, smem, region_bytes, token0, warp, lane);
    return;
  }

  // Cross-warp sum and store, or the cluster epilogue (warp_split_epilogue.cuh).
  detail::cross_warp_sum_and_store<T, kTiles, kWarpCount, kMoe, kPushBuilt>(
      p, smem, region, region_bytes, total, strip, token0, split, warp, lane, clustered, push);
}

}  // namespace sailfish::decode
