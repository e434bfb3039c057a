// Decode tier kernel: split-K, mma.sync.m16n8k16 on the swapped product (tile_shapes.h), for M up
// to 64 tokens per CTA (kTiles x 8).
//
// CTA (4 warps) = one 64-row strip of W (blockIdx.x) x one k-range (blockIdx.y, the split) x one
// group of up to 8 * kTiles tokens (blockIdx.z). Warp j owns n16 group j of the strip.
//
// Pipeline: kStages stages, each one 64 x 64 packed block plus its activation slice and scale
// rows, filled with cp.async and consumed after one wait + one barrier per block.
//   - weights: "self-slot" staging: every lane copies exactly the 16-byte (int4) or 32-byte
//     (int8) run it will read back, so the weight bytes never cross lanes;
//   - activations [tokens][64] (8 x 16-byte chunks per token row, chunk index XOR (row % 8) so
//     ldmatrix's eight 16-byte rows hit eight different bank groups), shared by the 4 warps, in
//     the same commit group; tokens >= M and columns >= K are zero-filled by cp.async;
//   - scales (and zero shifts and folds) of the block's groups, 128 bytes per scale row.
// Compute per block and warp: one 16-byte shared load of the lane's run, LOP3 dequantization
// (common/dequant.cuh) to exact q - bias pairs (q - shift with zero points), one mma per (k16
// slice, token tile) with ldmatrix.x4 activation fragments shared by two k16 slices; scales
// multiply the fp32 partial sums once per group (weights with zero points: one fused multiply-add
// per pair instead, with the fold).
//
// Shared memory: kStages * stage_bytes(kBits, kTiles) (tile_shapes.h): 18 KB (int4, 8 tokens) to
// 54 KB (int8, 64 tokens).
#pragma once

#include <cstdint>

#include "common/dequant.cuh"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/griddepcontrol.cuh"
#include "common/ptx/ldmatrix.cuh"
#include "common/ptx/mma_sync.cuh"
#include "common/ptx/red_global.cuh"
#include "common/warp_uniform.cuh"
#include "decode/config.h"

namespace sailfish::decode {

struct DecodeParams {
  const uint8_t* codes;    // packed codes
  const void* scales;      // [scale_rows][n_pad]
  const uint16_t* zero_shift;  // [scale_rows][n_pad] integers (docs/FORMAT.md), or null for
                               // symmetric weights
  const void* zero_fold;   // [scale_rows][n_pad], or null for symmetric weights
  const void* a;           // activations [m][lda] (16-byte aligned rows)
  int64_t lda;
  void* y;                 // [m][n]
  const void* bias;        // [n] or null (Epilogue::kStore and kCluster; the others add it
                           // elsewhere)
  float* partials;         // Epilogue::kPartials: [splits][m_pad][n_pad] (token-major)
  int32_t m, n, k;
  int32_t k_blocks, n_pad, m_pad;
  int32_t group_shift;     // log2(group rows); 30 for channelwise (every column in group 0)
  int32_t splits;
  Epilogue epilogue;
  // Warp-split kernel only (tile_shapes.h): bytes of one stage, the activation rows it holds, and
  // the stages per warp (warp_split_instances.h: 3 or kStages at 3-4 token tiles, kStages or
  // warp_split_deep_stages at 1-2).
  int32_t warp_stage_bytes, act_rows, warp_stages;
  // Warp-split kernel, Stream-K instance (stream_k_grid.h: stream_k_plan): strips per cluster; the
  // cluster holds `splits` CTAs. 0 elsewhere.
  int32_t stream_k_strips;
  // Warp-split kernel, Epilogue::kCluster at 1-2 token tiles: the push form (cluster_epilogue.h,
  // kClusterPushMaxTiles; warp_split_epilogue.cuh, cluster_push_and_store) when nonzero.
  int32_t cluster_push;
  // Warp-split kernel, MoE instances (kMoe; docs/MOE.md): M group blockIdx.z is sorted block z of
  // the align step, whose expert moe_block_experts[z] picks the weight, or -1 past the blocks the
  // routing filled (the CTA has nothing to do). Expert e's codes start e * moe_code_stride bytes
  // in; its scale rows, zero shifts and zero folds e * moe_meta_stride elements in. The kernel
  // waits for the previous grid (the align step) before it reads any of these, so a MoE launch may
  // use programmatic dependent launch.
  const int32_t* moe_block_experts = nullptr;
  int64_t moe_code_stride = 0;
  int64_t moe_meta_stride = 0;
  // The align step's sorted_rows ([m]: slot -> choice, -1 for padding), for the two fused steps
  // (docs/MOE.md, v2); null when neither runs.
  const int32_t* moe_sorted_rows = nullptr;
  // Fused gather: slot s's activation row is A's row moe_sorted_rows[s] / moe_choices_per_row
  // (top_k for MoeInput::kToken, 1 for kChoice), read in place from `a` at stride `lda`; padding
  // slots read zeros. Otherwise `a` is the gathered slab, slot s at row s.
  int32_t moe_gather_rows = 0;
  int32_t moe_choices_per_row = 1;
  // Fused combine: slot s's outputs go to Y's row moe_sorted_rows[s] (a choice), plus the bias
  // row of the block's expert (`bias`: [local experts][n], or null), times moe_row_weights[choice]
  // (or null: 1). Padding slots store nothing. Otherwise Y is the products slab, slot s at row s.
  int32_t moe_direct_output = 0;
  const float* moe_row_weights = nullptr;
  // Self-align (moe_block_rank.cuh; docs/MOE.md, v3): no align launch ran; every CTA ranks the
  // routing (moe_topk_ids [moe_choices] of moe_experts global experts, moe_expert_map or null)
  // into its block's expert and choices, kept in its MoE slots at moe_slots_offset bytes of
  // dynamic shared memory, and moe_sorted_rows and moe_block_experts are not read. Without the
  // fused combine, the first CTA of each block writes the combine kernel's inputs:
  // moe_block_experts_out [blocks] and moe_choice_slots_out [choices].
  int32_t moe_self_align = 0;
  const int32_t* moe_topk_ids = nullptr;
  const int32_t* moe_expert_map = nullptr;
  int32_t moe_choices = 0, moe_experts = 0, moe_local_experts = 0;
  int32_t moe_slots_offset = 0;
  int32_t* moe_block_experts_out = nullptr;
  int32_t* moe_choice_slots_out = nullptr;
};

namespace detail {

// The four pairs of one word, (c, k0k1) (c, k8k9) (c+8, k0k1) (c+8, k8k9), as an mma A fragment:
// (g, k0k1) (g+8, k0k1) (g, k8k9) (g+8, k8k9).
template <typename P>
__device__ __forceinline__ void pairs_to_fragment(const P (&v)[4], uint32_t (&a)[4]) {
  a[0] = gpu::pair_bits(v[0]);
  a[1] = gpu::pair_bits(v[2]);
  a[2] = gpu::pair_bits(v[1]);
  a[3] = gpu::pair_bits(v[3]);
}

// In place, pair * scale + fold with one packed fused multiply-add per pair: v[0], v[1] belong to
// row g (scale sc, fold fo), v[2], v[3] to row g + 8 (sc8, fo8).
template <typename T>
__device__ __forceinline__ void scale_and_fold(gpu::Pair<T> (&v)[4], T sc, T sc8, T fo, T fo8) {
  using P = gpu::Pair<T>;
  const P scale(sc, sc), scale8(sc8, sc8), fold(fo, fo), fold8(fo8, fo8);
  v[0] = __hfma2(v[0], scale, fold);
  v[1] = __hfma2(v[1], scale, fold);
  v[2] = __hfma2(v[2], scale8, fold8);
  v[3] = __hfma2(v[3], scale8, fold8);
}

// Slice s of a word run with zero points, dequantized exactly and scaled: each code minus its
// column's shift (zero_subtrahend), then times the scale plus the fold, columns `row` (pairs v[0],
// v[1]) and `row + 8` (v[2], v[3]) of the stage's meta rows. int4: word s; int8: words 2s
// (column c) and 2s + 1 (column c + 8).
template <typename T, int kBits, int kWords>
__device__ __forceinline__ void zero_point_pairs(const uint32_t (&words)[kWords], int s,
                                                 const T* meta_scales, const uint16_t* meta_shifts,
                                                 const T* meta_folds, int row,
                                                 gpu::Pair<T> (&v)[4]) {
  const uint32_t sub = gpu::zero_subtrahend<T, kBits>(meta_shifts[row]);
  const uint32_t sub8 = gpu::zero_subtrahend<T, kBits>(meta_shifts[row + 8]);
  if constexpr (kBits == 4) {
    gpu::int4_word_to_shifted_pairs<T>(words[s], sub, sub8, v);
  } else {
    gpu::int8_word_to_shifted_pairs<T>(words[2 * s], sub, v);
    gpu::int8_word_to_shifted_pairs<T>(words[2 * s + 1], sub8, v + 2);
  }
  scale_and_fold<T>(v, meta_scales[row], meta_scales[row + 8], meta_folds[row],
                    meta_folds[row + 8]);
}

// The CTA's MoE slots in dynamic shared memory (DecodeParams::moe_slots_offset): the choice of
// each of the block's act_rows slots (-1: padding), then the block's expert.
__device__ __forceinline__ int32_t* moe_slots(const DecodeParams& p) {
  extern __shared__ __align__(16) uint8_t moe_smem[];
  return reinterpret_cast<int32_t*>(moe_smem + p.moe_slots_offset);
}

// Slot `slot`'s choice (a row of the block grid): from the CTA's own ranking, or the align step's
// sorted rows.
__device__ __forceinline__ int32_t moe_choice_of(const DecodeParams& p, int slot) {
  if (p.moe_self_align != 0) return moe_slots(p)[slot - int(blockIdx.z) * p.act_rows];
  return p.moe_sorted_rows[slot];
}

// The expert of the CTA's block.
__device__ __forceinline__ int32_t moe_expert_of(const DecodeParams& p) {
  if (p.moe_self_align != 0) return moe_slots(p)[p.act_rows];
  return p.moe_block_experts[blockIdx.z];
}

template <typename T, bool kMoe = false>
__device__ __forceinline__ void store_output_pair(const DecodeParams& p, int token, int n0,
                                                  float lo, float hi, int split) {
  using P = gpu::Pair<T>;
  if constexpr (kMoe) {
    if (p.moe_direct_output != 0) {  // the fused combine (DecodeParams): split plans end here
      if (token >= p.m || n0 >= p.n) return;
      const int32_t choice = moe_choice_of(p, token);
      if (choice < 0) return;  // a padding slot
      const bool both = n0 + 1 < p.n;
      if (p.bias != nullptr) {
        const int64_t expert = moe_expert_of(p);
        const T* bias = static_cast<const T*>(p.bias) + expert * p.n;
        lo += static_cast<float>(bias[n0]);
        if (both) hi += static_cast<float>(bias[n0 + 1]);
      }
      if (p.moe_row_weights != nullptr) {
        const float weight = p.moe_row_weights[choice];
        lo *= weight;
        hi *= weight;
      }
      T* out = static_cast<T*>(p.y) + int64_t(choice) * p.n + n0;
      if (both && (reinterpret_cast<uintptr_t>(out) & 3) == 0) {
        *reinterpret_cast<P*>(out) = P(static_cast<T>(lo), static_cast<T>(hi));
      } else {
        out[0] = static_cast<T>(lo);
        if (both) out[1] = static_cast<T>(hi);
      }
      return;
    }
  }
  if (p.epilogue == Epilogue::kPartials) {
    // Token-major, so the pair is one 8-byte store (n0 is even): the 8 lanes of a token write 64
    // contiguous bytes, and the reduce kernel reads and writes along n, both coalesced. Every slot
    // of the workspace tile is written (padding too), so the reduce never reads uninitialized
    // memory.
    float* row = p.partials + (int64_t(split) * p.m_pad + token) * p.n_pad + n0;
    *reinterpret_cast<float2*>(row) = make_float2(lo, hi);
    return;
  }
  if (token >= p.m || n0 >= p.n) return;
  T* out = static_cast<T*>(p.y) + int64_t(token) * p.n + n0;
  const bool both = n0 + 1 < p.n;
  const bool aligned = both && ((reinterpret_cast<uintptr_t>(out) & 3) == 0);
  if (p.epilogue != Epilogue::kAtomic) {  // kStore, or kCluster's reducing CTA
    if (p.bias != nullptr) {
      const T* bias = static_cast<const T*>(p.bias);
      lo += static_cast<float>(bias[n0]);
      if (both) hi += static_cast<float>(bias[n0 + 1]);
    }
    if (aligned) {
      *reinterpret_cast<P*>(out) = P(static_cast<T>(lo), static_cast<T>(hi));
    } else {
      out[0] = static_cast<T>(lo);
      if (both) out[1] = static_cast<T>(hi);
    }
  } else {  // kAtomic
    if (aligned) {
      gpu::red_add_pair(reinterpret_cast<P*>(out), P(static_cast<T>(lo), static_cast<T>(hi)));
    } else {
      gpu::red_add(out, static_cast<T>(lo));
      if (both) gpu::red_add(out + 1, static_cast<T>(hi));
    }
  }
}

// Copies the activation slice of k-block kb into a stage (at stage_act): tokens
// [token0, token0 + 8 kTiles) x 64 columns as 16-byte chunks, chunk index XOR (row % 8) so that
// ldmatrix's eight rows hit eight bank groups; tokens >= m and columns >= k are zero-filled.
// Thread `index` of `count` cooperating threads.
template <typename T, int kTiles>
__device__ __forceinline__ void copy_activation_slice(const DecodeParams& p, uint32_t stage_act,
                                                      int token0, int kb, int index, int count) {
  const T* act = static_cast<const T*>(p.a);
#pragma unroll
  for (int c = index; c < kTiles * kTokensPerTile * 8; c += count) {
    const int row = c / 8, chunk = c % 8;
    const int token = token0 + row, column = kb * 64 + chunk * 8;
    const bool valid = token < p.m && column < p.k;
    const T* src = valid ? act + int64_t(token) * p.lda + column : act;
    gpu::cp_async_16(stage_act + row * 128 + ((chunk ^ (row & 7)) << 4), src, valid ? 16 : 0);
  }
}

// Writes one mma C fragment (16 weight rows from n_base x 8 tokens from token_base). c0, c1 =
// (row g, tokens 2t, 2t+1), c2, c3 = (row g + 8, same tokens). Lanes g and g ^ 1 (lane ^ 4) swap
// halves so each lane owns two adjacent output columns for two tokens: even g keeps rows
// (g, g + 1), odd g rows (g + 7, g + 8).
template <typename T, bool kMoe = false>
__device__ __forceinline__ void store_fragment(const DecodeParams& p, const float (&c)[4],
                                               int n_base, int token_base, int lane, int split) {
  const bool odd = (lane >> 2) & 1;
  const int n0 = n_base + (odd ? (lane / 4) + 7 : (lane / 4));
  const float r0 = __shfl_xor_sync(0xffffffffu, odd ? c[0] : c[2], 4);
  const float r1 = __shfl_xor_sync(0xffffffffu, odd ? c[1] : c[3], 4);
  const int token = token_base + 2 * (lane % 4);
  store_output_pair<T, kMoe>(p, token, n0, odd ? r0 : c[0], odd ? c[2] : r0, split);
  store_output_pair<T, kMoe>(p, token + 1, n0, odd ? r1 : c[1], odd ? c[3] : r1, split);
}

// The cp.async pipeline both decode kernels run. A stage is issued in two parts: the weight run
// and scale rows (which no earlier kernel writes) and the activation slice (which the previous
// kernel may still be producing). The prologue fills kStages - 1 stages: the weights of all of
// them first, before waiting for the previous kernel (programmatic dependent launch: the weight
// stream starts while it drains), so they join commit group 0; group i then holds stage i's
// activations. Every later step commits exactly one group (possibly empty), so
// wait_group<kStages - 2> always means "stage i and everything before it have landed".
template <typename IssueWeights, typename IssueActivations>
__device__ __forceinline__ void fill_pipeline(int num_blocks, IssueWeights&& issue_weights,
                                              IssueActivations&& issue_activations) {
#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) {
    if (i < num_blocks) issue_weights(i, i);
  }
  gpu::wait_for_previous_grid();
#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) {
    if (i < num_blocks) issue_activations(i, i);
    gpu::cp_async_commit();
  }
  gpu::allow_next_grid();
}

// After stage i has landed and been made visible: refill the slot stage i - 1 used with stage
// i + kStages - 1 (if any), and commit one group either way.
template <typename IssueWeights, typename IssueActivations>
__device__ __forceinline__ void refill_pipeline(int i, int num_blocks, int write_slot,
                                                IssueWeights&& issue_weights,
                                                IssueActivations&& issue_activations) {
  if (i + kStages - 1 < num_blocks) {
    issue_weights(i + kStages - 1, write_slot);
    issue_activations(i + kStages - 1, write_slot);
  }
  gpu::cp_async_commit();
}

}  // namespace detail

template <typename T, int kBits, int kTiles>
__global__ void __launch_bounds__(kThreads) decode_kernel(const __grid_constant__ DecodeParams p) {
  using P = gpu::Pair<T>;
  constexpr int kW = weight_stage_bytes(kBits);
  constexpr int kAct = activation_stage_bytes(kTiles);
  constexpr int kStage = stage_bytes(kBits, kTiles);
  constexpr int kRunBytes = kBits * 4;  // a lane's run: 16 bytes (int4) or 32 bytes (int8)
  extern __shared__ __align__(16) uint8_t smem[];

  const int warp = gpu::warp_uniform(threadIdx.x / 32), lane = threadIdx.x % 32;
  const int strip = blockIdx.x, split = blockIdx.y;
  const int token0 = blockIdx.z * kTiles * kTokensPerTile;
  const int kb_begin = static_cast<int>(split_begin(p.k_blocks, p.splits, split));
  const int kb_end = static_cast<int>(split_begin(p.k_blocks, p.splits, split + 1));
  const int num_blocks = kb_end - kb_begin;
  const uint32_t smem_base = gpu::shared_address(smem);
  const bool has_zero = p.zero_fold != nullptr;
  const int meta_rows = meta_rows_for(p.group_shift);
  const T* scales = static_cast<const T*>(p.scales);
  const T* folds = static_cast<const T*>(p.zero_fold);
  const uint16_t* shifts = p.zero_shift;
  const int run_offset = (warp * 32 + lane) * kRunBytes;

  auto issue_weights = [&](int index, int slot) {
    const int kb = kb_begin + index;
    const uint32_t stage = smem_base + slot * kStage;
    const uint8_t* block = p.codes + (int64_t(strip) * p.k_blocks + kb) * kW;
#pragma unroll
    for (int c = 0; c < kRunBytes / 16; ++c) {
      gpu::cp_async_16(stage + run_offset + 16 * c, block + run_offset + 16 * c);
    }
    const int g0 = (kb * 64) >> p.group_shift;
    const int t = threadIdx.x;
    if (t < meta_rows * 8) {
      const int r = t / 8, chunk = t % 8;
      gpu::cp_async_16(stage + kW + kAct + r * 128 + chunk * 16,
                       scales + int64_t(g0 + r) * p.n_pad + strip * 64 + chunk * 8);
    } else if (has_zero && t >= 32 && t < 32 + meta_rows * 8) {
      const int r = (t - 32) / 8, chunk = (t - 32) % 8;
      gpu::cp_async_16(stage + kW + kAct + kMetaPartBytes + r * 128 + chunk * 16,
                       shifts + int64_t(g0 + r) * p.n_pad + strip * 64 + chunk * 8);
    } else if (has_zero && t >= 64 && t < 64 + meta_rows * 8) {
      const int r = (t - 64) / 8, chunk = (t - 64) % 8;
      gpu::cp_async_16(stage + kW + kAct + 2 * kMetaPartBytes + r * 128 + chunk * 16,
                       folds + int64_t(g0 + r) * p.n_pad + strip * 64 + chunk * 8);
    }
  };
  auto issue_activations = [&](int index, int slot) {
    detail::copy_activation_slice<T, kTiles>(p, smem_base + slot * kStage + kW, token0,
                                             kb_begin + index, threadIdx.x, kThreads);
  };

  // acc: the current scale group's partial sums of (q - 8) * a, exact small integers times
  // activations, accumulated in fp32; total: the scaled sum over finished groups. Symmetric
  // weights apply the scale once per group here (two fp32 multiply-adds per output per group)
  // instead of once per weight pair, which takes a third of the dequantization instructions
  // off the inner loop and rounds nothing to 16 bits. Weights with zero points apply scale and
  // fold per pair (one hfma2) and keep a unit flush scale.
  float acc[kTiles][4], total[kTiles][4];
#pragma unroll
  for (int tt = 0; tt < kTiles; ++tt) {
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[tt][i] = total[tt][i] = 0.0f;
  }
  int current_group = -1;
  float group_scale = 0.0f, group_scale8 = 0.0f;
  auto flush_group = [&]() {
#pragma unroll
    for (int tt = 0; tt < kTiles; ++tt) {
      total[tt][0] = fmaf(group_scale, acc[tt][0], total[tt][0]);
      total[tt][1] = fmaf(group_scale, acc[tt][1], total[tt][1]);
      total[tt][2] = fmaf(group_scale8, acc[tt][2], total[tt][2]);
      total[tt][3] = fmaf(group_scale8, acc[tt][3], total[tt][3]);
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[tt][i] = 0.0f;
    }
  };

  detail::fill_pipeline(num_blocks, issue_weights, issue_activations);

  const int row_in_strip = warp * 16 + lane / 4;  // A-fragment row g of this warp's n16 group
  int read_slot = 0, write_slot = kStages - 1;
  for (int i = 0; i < num_blocks; ++i) {
    gpu::cp_async_wait<kStages - 2>();
    // NOTE: the barrier makes every thread's copies of stage i visible to every warp (ldmatrix
    // and the scale rows read bytes other lanes copied) and guarantees that stage i - 1, whose
    // slot the next copy overwrites, is no longer being read.
    __syncthreads();
    detail::refill_pipeline(i, num_blocks, write_slot, issue_weights, issue_activations);

    const uint8_t* stage = smem + read_slot * kStage;
    const uint32_t stage_address = smem_base + read_slot * kStage;
    uint32_t words[kBits];
#pragma unroll
    for (int c = 0; c < kRunBytes / 16; ++c) {
      const uint4 v = *reinterpret_cast<const uint4*>(stage + run_offset + 16 * c);
      words[4 * c + 0] = v.x;
      words[4 * c + 1] = v.y;
      words[4 * c + 2] = v.z;
      words[4 * c + 3] = v.w;
    }
    const T* meta_scales = reinterpret_cast<const T*>(stage + kW + kAct);
    const uint16_t* meta_shifts =
        reinterpret_cast<const uint16_t*>(stage + kW + kAct + kMetaPartBytes);
    const T* meta_folds = reinterpret_cast<const T*>(stage + kW + kAct + 2 * kMetaPartBytes);

#pragma unroll
    for (int sp = 0; sp < 4; sp += 2) {  // two k16 slices per ldmatrix.x4
      uint32_t b[kTiles][4];
#pragma unroll
      for (int tt = 0; tt < kTiles; ++tt) {
        const int row = tt * kTokensPerTile + (lane & 7);
        const int chunk = 2 * sp + (lane >> 3);
        gpu::ldmatrix_x4(stage_address + kW + row * 128 + ((chunk ^ (row & 7)) << 4), b[tt]);
      }
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int s = sp + half;
        // Scale group of this k16 slice; uniform across the CTA, so the branch never diverges.
        const int group = (kb_begin * 64 + i * 64 + 16 * s) >> p.group_shift;
        const int r = slice_scale_row(p.group_shift, s);  // row in the stage
        if (group != current_group) {
          if (current_group >= 0) flush_group();
          current_group = group;
          group_scale = has_zero ? 1.0f : static_cast<float>(meta_scales[r * 64 + row_in_strip]);
          group_scale8 =
              has_zero ? 1.0f : static_cast<float>(meta_scales[r * 64 + row_in_strip + 8]);
        }
        // (c, k0k1) (c, k8k9) (c+8, k0k1) (c+8, k8k9), each q - bias (q - shift) exactly
        P v[4];
        const int row = r * 64 + row_in_strip;
        if (has_zero) {
          detail::zero_point_pairs<T, kBits>(words, s, meta_scales, meta_shifts, meta_folds, row,
                                             v);
        } else if constexpr (kBits == 4) {
          gpu::int4_word_to_pairs<T>(words[s], v);
        } else {
          gpu::int8_word_to_pairs<T>(words[2 * s], v);          // column c
          gpu::int8_word_to_pairs<T>(words[2 * s + 1], v + 2);  // column c + 8
        }
        uint32_t a[4];
        detail::pairs_to_fragment(v, a);
#pragma unroll
        for (int tt = 0; tt < kTiles; ++tt) {
          gpu::mma_m16n8k16<T>(acc[tt], a, b[tt][2 * half], b[tt][2 * half + 1]);
        }
      }
    }
    read_slot = read_slot + 1 == kStages ? 0 : read_slot + 1;
    write_slot = write_slot + 1 == kStages ? 0 : write_slot + 1;
  }
  gpu::cp_async_wait<0>();
  if (current_group >= 0) flush_group();

#pragma unroll
  for (int tt = 0; tt < kTiles; ++tt) {
    detail::store_fragment<T>(p, total[tt], strip * 64 + warp * 16,
                              token0 + tt * kTokensPerTile, lane, split);
  }
}

}  // namespace sailfish::decode
