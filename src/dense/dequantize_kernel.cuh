// Dense tier, step 1: dequantize packed rows [n_begin, n_end) into a scratch fp16/bf16 weight
// W[n - n_begin][k] (row-major, leading dimension ld >= k_pad) for cuBLASLt to consume.
//
// Grid-stride over 64 x 64 packed blocks, k-block fastest so consecutive CTAs read consecutive
// bytes. Per block: each lane loads its whole run (16 B int4 / 32 B int8) with one or two vector
// loads (the next block's run is loaded before the current one is processed, so a load is always
// in flight), converts it with the magic-number idiom (common/dequant.cuh; with zero points the
// subtraction takes the zero shift), applies the scale (and zero fold) with one packed multiply
// (fused multiply-add), and stores the register pairs
// into a padded shared tile. After a barrier the tile leaves as 16-byte row vectors.
//
// Act-order: packed column r belongs to input column perm[r]; the kernel writes it there, so the
// GEMM consumes activations unpermuted. Scattering columns of a row-major W would mean 2-byte
// stores a row apart, so act-order weights are written transposed instead, Wt[k][n] (the tile is
// staged [k][n] in shared memory): packed column r becomes row perm[r] of Wt, 64 contiguous n
// values, and every store is again a full 16-byte vector. cuBLASLt reads Wt without a transpose.
//
// Shared memory: kBlocksPerStep tiles of 64 x 72, 18 KB (dense/config.h).
#pragma once

#include <cstdint>

#include "common/dequant.cuh"
#include "dense/config.h"

namespace sailfish::dense {

struct DequantizeParams {
  const uint8_t* codes;      // packed codes
  const void* scales;        // [scale_rows][n_pad]
  const uint16_t* zero_shift;  // [scale_rows][n_pad] integers (docs/FORMAT.md), or null
  const void* zero_fold;     // [scale_rows][n_pad] or null
  const int32_t* perm;       // [k] or null
  void* out;                 // scratch [n_end - n_begin][ld], or [k][ld] transposed (act-order)
  int64_t ld;                // scratch leading dimension (elements)
  int64_t n_pad;
  int32_t k;                 // logical k (act-order writes stop there)
  int32_t k_blocks;
  int32_t n_block_begin;     // first 64-row block of this chunk
  int32_t n_block_count;     // 64-row blocks in this chunk
  int32_t group_shift;       // log2(group rows); 30 for channelwise (one group)
};

template <typename T, int kBits, bool kHasZero, bool kActOrder>
__global__ void __launch_bounds__(kThreads) dequantize_kernel(const DequantizeParams p) {
  using P = gpu::Pair<T>;
  constexpr int kRunVectors = kBits / 4;  // 16-byte loads per lane run: 1 (int4) or 2 (int8)
  constexpr int kBlockBytes = kTileRows * kTileCols * kBits / 8;
  // kBlocksPerStep blocks per iteration, each with its own tile, so that twice the bytes are in
  // flight per thread (the loads of the next step are issued before this step is processed).
  __shared__ __align__(16) T tiles[kBlocksPerStep][kTileRows * kTileStride];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row_in_group = lane / 4;      // fragment column c = 16 * warp + lane / 4
  const int pair_col = 2 * (lane % 4);    // fragment rows 2t, 2t + 1 (+8)
  const int64_t total = int64_t(p.n_block_count) * p.k_blocks;
  const int64_t stride = int64_t(gridDim.x) * kBlocksPerStep;
  const T* scales = static_cast<const T*>(p.scales);
  const T* folds = static_cast<const T*>(p.zero_fold);
  T* out = static_cast<T*>(p.out);

  auto load_run = [&](int64_t block, uint4 (&run)[kRunVectors]) {
    if (block >= total) return;
    const int64_t global_block = int64_t(p.n_block_begin) * p.k_blocks + block;
    const uint4* src = reinterpret_cast<const uint4*>(p.codes + global_block * kBlockBytes) +
                       (warp * 32 + lane) * kRunVectors;
#pragma unroll
    for (int i = 0; i < kRunVectors; ++i) run[i] = __ldg(src + i);
  };

  // Dequantizes one block's run into tile (fragment pairs -> padded shared rows).
  auto dequantize_run = [&](int64_t block, const uint4 (&run)[kRunVectors], T* tile) {
    const int nb = static_cast<int>(block / p.k_blocks);
    const int kb = static_cast<int>(block % p.k_blocks);
    const int64_t col0 = int64_t(p.n_block_begin + nb) * kTileRows + warp * 16 + row_in_group;
    const uint32_t* words = reinterpret_cast<const uint32_t*>(run);
#pragma unroll
    for (int s = 0; s < 4; ++s) {  // k16 slice of the block
      const int64_t group = (int64_t(kb) * kTileCols + 16 * s) >> p.group_shift;
      const int64_t meta = group * p.n_pad + col0;
      P scale[2], fold[2];
      uint32_t sub[2];  // zero subtrahends (dequant.cuh)
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // column c, c + 8
        const T sv = scales[meta + 8 * h];
        scale[h] = P(sv, sv);
        if constexpr (kHasZero) {
          const T fv = folds[meta + 8 * h];
          fold[h] = P(fv, fv);
          sub[h] = gpu::zero_subtrahend<T, kBits>(p.zero_shift[meta + 8 * h]);
        }
      }
      P pairs[2][2];  // [column half][k half], each q - bias (q - shift) exactly
      if constexpr (kBits == 4) {
        P v[4];
        if constexpr (kHasZero) {
          gpu::int4_word_to_shifted_pairs<T>(words[s], sub[0], sub[1], v);
        } else {
          gpu::int4_word_to_pairs<T>(words[s], v);
        }
        pairs[0][0] = v[0];
        pairs[0][1] = v[1];
        pairs[1][0] = v[2];
        pairs[1][1] = v[3];
      } else if constexpr (kHasZero) {
        gpu::int8_word_to_shifted_pairs<T>(words[2 * s], sub[0], pairs[0]);
        gpu::int8_word_to_shifted_pairs<T>(words[2 * s + 1], sub[1], pairs[1]);
      } else {
        gpu::int8_word_to_pairs<T>(words[2 * s], pairs[0]);
        gpu::int8_word_to_pairs<T>(words[2 * s + 1], pairs[1]);
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int kh = 0; kh < 2; ++kh) {
          P w;
          if constexpr (kHasZero) {
            w = __hfma2(pairs[h][kh], scale[h], fold[h]);
          } else {
            w = __hmul2(pairs[h][kh], scale[h]);
          }
          const int row = warp * 16 + row_in_group + 8 * h;
          const int col = 16 * s + 8 * kh + pair_col;
          if constexpr (kActOrder) {  // tile[k][n]: the pair's two k values are two rows
            tile[col * kTileStride + row] = w.x;
            tile[(col + 1) * kTileStride + row] = w.y;
          } else {
            *reinterpret_cast<P*>(&tile[row * kTileStride + col]) = w;
          }
        }
      }
    }
  };

  // 64 rows x 8 vectors of 8 elements; 8 consecutive threads cover one 128-byte row.
  auto store_tile = [&](int64_t block, const T* tile) {
    const int nb = static_cast<int>(block / p.k_blocks);
    const int kb = static_cast<int>(block % p.k_blocks);
#pragma unroll
    for (int i = 0; i < kTileRows * kTileCols / 8 / kThreads; ++i) {
      const int vec = threadIdx.x + i * kThreads;
      const int row = vec / 8, chunk = vec % 8;
      const uint4 value = *reinterpret_cast<const uint4*>(&tile[row * kTileStride + chunk * 8]);
      if constexpr (kActOrder) {  // tile row = packed column kb * 64 + row -> Wt row perm[...]
        const int r = kb * kTileCols + row;
        if (r < p.k) {
          T* dst = out + int64_t(__ldg(p.perm + r)) * p.ld + int64_t(nb) * kTileRows + chunk * 8;
          *reinterpret_cast<uint4*>(dst) = value;
        }
      } else {
        T* dst_row = out + (int64_t(nb) * kTileRows + row) * p.ld;
        *reinterpret_cast<uint4*>(dst_row + int64_t(kb) * kTileCols + chunk * 8) = value;
      }
    }
  };

  // Block u of a step starting at `first` is first + u * gridDim.x: consecutive CTAs read
  // consecutive blocks in each of the step's waves.
  uint4 run[kBlocksPerStep][kRunVectors];
  int64_t first = blockIdx.x;
#pragma unroll
  for (int u = 0; u < kBlocksPerStep; ++u) load_run(first + u * gridDim.x, run[u]);
  for (; first < total; first += stride) {
    uint4 next[kBlocksPerStep][kRunVectors];
#pragma unroll
    for (int u = 0; u < kBlocksPerStep; ++u) load_run(first + stride + u * gridDim.x, next[u]);
#pragma unroll
    for (int u = 0; u < kBlocksPerStep; ++u) {
      const int64_t block = first + u * gridDim.x;
      if (block < total) dequantize_run(block, run[u], tiles[u]);
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kBlocksPerStep; ++u) {
      const int64_t block = first + u * gridDim.x;
      if (block < total) store_tile(block, tiles[u]);
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kBlocksPerStep; ++u) {
#pragma unroll
      for (int i = 0; i < kRunVectors; ++i) run[u][i] = next[u][i];
    }
  }
}

}  // namespace sailfish::dense
