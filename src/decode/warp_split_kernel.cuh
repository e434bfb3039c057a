// Decode tier kernel for M <= 32 tokens per CTA: every warp streams whole 64 x 64 blocks.
//
// The strip kernel (decode_kernel.cuh) gives each warp one n16 group of a block: 512 bytes of
// weights per warp and per block, so the per-block fixed work (copy issue, barrier, activation
// fragments, group bookkeeping) is paid for every 512 bytes, and on the H200 it was issue-bound
// at about 2 TB/s. Here the 4 warps of a CTA split the CTA's k-range instead (the first seed's
// "warps split K contiguously"), and each warp owns all four n16 groups of its blocks:
//   - a lane copies its four (int4) or eight (int8) 16-byte runs of a block into its own slot
//     and reads back only those ("self-slot" staging, cp.async, kStages deep per warp);
//   - the activation slice and scale rows of the block ride in the same commit group; ldmatrix
//     and the scale loads read bytes other lanes of the same warp copied, so each stage needs a
//     __syncwarp after the wait, and no CTA barrier anywhere in the mainloop;
//   - one pair of ldmatrix.x4 per k32 serves all four n16 groups (16 mma per block and token tile).
// Symmetric weights with kTiles <= 2 scale the fp32 partial sums once per group (decode_kernel.cuh
// explains why); otherwise scales (and zero folds) apply per pair with one hfma2.
// At the end the four warps' sums meet in shared memory and warp 0 adds them in warp order
// (deterministic) and runs the epilogue (store, red.global or split partials).
//
// Shared memory: kWarps * kStages * stage_bytes(kBits, kTiles) (config.h: warp_split_shared_bytes),
// 64 KB for int4 and 8 tokens with 4 stages.
#pragma once

#include <cstdint>

#include "common/dequant.cuh"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/griddepcontrol.cuh"
#include "common/ptx/ldmatrix.cuh"
#include "common/ptx/mma_sync.cuh"
#include "decode/config.h"
#include "decode/decode_kernel.cuh"

namespace sailfish::decode {

template <typename T, int kBits, int kTiles>
__global__ void __launch_bounds__(kThreads)
    decode_warp_split_kernel(const __grid_constant__ DecodeParams p) {
  using P = gpu::Pair<T>;
  constexpr int kW = weight_stage_bytes(kBits);
  constexpr int kAct = activation_stage_bytes(kTiles);
  constexpr int kStage = stage_bytes(kBits, kTiles);
  constexpr int kRunBytes = kBits * 4;  // 16 (int4) or 32 (int8) bytes per (n16 group, lane)
  constexpr int kWordsPerGroup = kBits;  // words of one n16 group's run
  constexpr bool kScaleSums = kTiles <= 2;
  static_assert(kTiles <= 4, "accumulators for 4 n16 groups x kTiles tiles must fit registers");
  static_assert(4 * kTiles * 4 * 32 * 4 <= kStages * kStage, "the reduction reuses a warp's stages");
  extern __shared__ __align__(16) uint8_t smem[];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int strip = blockIdx.x, split = blockIdx.y;
  const int token0 = blockIdx.z * kTiles * kTokensPerTile;
  const int cta_begin = static_cast<int>(split_begin(p.k_blocks, p.splits, split));
  const int cta_end = static_cast<int>(split_begin(p.k_blocks, p.splits, split + 1));
  const int kb_begin = cta_begin + (cta_end - cta_begin) * warp / kWarps;
  const int kb_end = cta_begin + (cta_end - cta_begin) * (warp + 1) / kWarps;
  const int num_blocks = kb_end - kb_begin;
  uint8_t* region = smem + warp * kStages * kStage;
  const uint32_t region_address = gpu::shared_address(region);
  const bool has_zero = p.zero_fold != nullptr;
  const int meta_rows = p.group_shift >= 6 ? 1 : (64 >> p.group_shift);
  const T* scales = static_cast<const T*>(p.scales);
  const T* folds = static_cast<const T*>(p.zero_fold);

  auto issue_weights = [&](int index, int slot) {
    const int kb = kb_begin + index;
    const uint32_t stage = region_address + slot * kStage;
    const uint8_t* block = p.codes + (int64_t(strip) * p.k_blocks + kb) * kW;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int offset = (j * 32 + lane) * kRunBytes;
#pragma unroll
      for (int c = 0; c < kRunBytes / 16; ++c) {
        gpu::cp_async_16(stage + offset + 16 * c, block + offset + 16 * c);
      }
    }
    const int g0 = (kb * 64) >> p.group_shift;
    if (lane < meta_rows * 8) {
      const int r = lane / 8, chunk = lane % 8;
      const int64_t src = int64_t(g0 + r) * p.n_pad + strip * 64 + chunk * 8;
      gpu::cp_async_16(stage + kW + kAct + r * 128 + chunk * 16, scales + src);
      if (has_zero) {
        gpu::cp_async_16(stage + kW + kAct + kMetaStageBytes / 2 + r * 128 + chunk * 16,
                         folds + src);
      }
    }
  };
  auto issue_activations = [&](int index, int slot) {
    detail::copy_activation_slice<T, kTiles>(p, region_address + slot * kStage + kW, token0,
                                             kb_begin + index, lane, 32);
  };

  float acc[4][kTiles][4], total[4][kTiles][4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
#pragma unroll
    for (int tt = 0; tt < kTiles; ++tt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[j][tt][i] = total[j][tt][i] = 0.0f;
    }
  }
  int current_group = -1;
  float group_scale[4][2];  // [n16 group][row g, g + 8]
  auto flush_group = [&]() {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int tt = 0; tt < kTiles; ++tt) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          total[j][tt][i] = fmaf(group_scale[j][i / 2], acc[j][tt][i], total[j][tt][i]);
          acc[j][tt][i] = 0.0f;
        }
      }
    }
  };

  detail::fill_pipeline(num_blocks, issue_weights, issue_activations);

  const int row_g = lane / 4;
  int read_slot = 0, write_slot = kStages - 1;
  for (int i = 0; i < num_blocks; ++i) {
    gpu::cp_async_wait<kStages - 2>();
    // NOTE: makes the stage's activation and scale bytes (copied by other lanes) visible to the
    // whole warp, and guarantees no lane still reads the slot the next copy overwrites.
    __syncwarp();
    detail::refill_pipeline(i, num_blocks, write_slot, issue_weights, issue_activations);

    const uint8_t* stage = region + read_slot * kStage;
    const uint32_t stage_address = region_address + read_slot * kStage;
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
    const T* meta_scales = reinterpret_cast<const T*>(stage + kW + kAct);
    const T* meta_folds = meta_scales + kMetaStageBytes / 4;
    const int kb = kb_begin + i;

#pragma unroll
    for (int sp = 0; sp < 4; sp += 2) {
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
        const int r = p.group_shift >= 6 ? 0 : (16 * s) >> p.group_shift;
        if constexpr (kScaleSums) {
          const int group = (kb * 64 + 16 * s) >> p.group_shift;
          if (group != current_group) {  // uniform across the warp
            if (current_group >= 0) flush_group();
            current_group = group;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                group_scale[j][h] =
                    has_zero ? 1.0f
                             : static_cast<float>(meta_scales[r * 64 + j * 16 + row_g + 8 * h]);
              }
            }
          }
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          P v[4];  // (c, k0k1) (c, k8k9) (c+8, k0k1) (c+8, k8k9), each q - bias exactly
          if constexpr (kBits == 4) {
            gpu::int4_word_to_pairs<T>(words[j][s], v);
          } else {
            gpu::int8_word_to_pairs<T>(words[j][2 * s], v);
            gpu::int8_word_to_pairs<T>(words[j][2 * s + 1], v + 2);
          }
          if (!kScaleSums || has_zero) {
            const int row = r * 64 + j * 16 + row_g;
            const T sc = meta_scales[row], sc8 = meta_scales[row + 8];
            const T zero = static_cast<T>(0.0f);
            const T fo = has_zero ? meta_folds[row] : zero;
            const T fo8 = has_zero ? meta_folds[row + 8] : zero;
            const P scale(sc, sc), scale8(sc8, sc8), fold(fo, fo), fold8(fo8, fo8);
            v[0] = __hfma2(v[0], scale, fold);
            v[1] = __hfma2(v[1], scale, fold);
            v[2] = __hfma2(v[2], scale8, fold8);
            v[3] = __hfma2(v[3], scale8, fold8);
          }
          const uint32_t a[4] = {*reinterpret_cast<uint32_t*>(&v[0]),
                                 *reinterpret_cast<uint32_t*>(&v[2]),
                                 *reinterpret_cast<uint32_t*>(&v[1]),
                                 *reinterpret_cast<uint32_t*>(&v[3])};
#pragma unroll
          for (int tt = 0; tt < kTiles; ++tt) {
            gpu::mma_m16n8k16<T>(kScaleSums ? acc[j][tt] : total[j][tt], a, b[tt][2 * half],
                                 b[tt][2 * half + 1]);
          }
        }
      }
    }
    read_slot = read_slot + 1 == kStages ? 0 : read_slot + 1;
    write_slot = write_slot + 1 == kStages ? 0 : write_slot + 1;
  }
  gpu::cp_async_wait<0>();
  if (kScaleSums && current_group >= 0) flush_group();

  // Cross-warp sum: warps 1-3 park their sums in their own (now idle) stage region, laid out
  // [j][tt][i][lane] so the 32 lanes touch 32 consecutive words; warp 0 adds them in warp order.
  __syncthreads();  // every warp's copies have landed and no warp still reads its stages
  float* parked = reinterpret_cast<float*>(region);
  if (warp != 0) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int tt = 0; tt < kTiles; ++tt) {
#pragma unroll
        for (int i = 0; i < 4; ++i) parked[((j * kTiles + tt) * 4 + i) * 32 + lane] = total[j][tt][i];
      }
    }
  }
  __syncthreads();
  if (warp != 0) return;
#pragma unroll
  for (int w = 1; w < kWarps; ++w) {
    const float* other = reinterpret_cast<const float*>(smem + w * kStages * kStage);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int tt = 0; tt < kTiles; ++tt) {
#pragma unroll
        for (int i = 0; i < 4; ++i) total[j][tt][i] += other[((j * kTiles + tt) * 4 + i) * 32 + lane];
      }
    }
  }

  // Epilogue: as decode_kernel.cuh, for each of the four n16 groups.
#pragma unroll
  for (int j = 0; j < 4; ++j) {
#pragma unroll
    for (int tt = 0; tt < kTiles; ++tt) {
      detail::store_fragment<T>(p, total[j][tt], strip * 64 + j * 16,
                                token0 + tt * kTokensPerTile, lane, split);
    }
  }
}

}  // namespace sailfish::decode
