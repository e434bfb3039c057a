// A block's k16 slices in the warp-split kernel (warp_split_kernel.cuh): the activation fragments
// read from a stage, and one n16 group's share of a slice, the group's packed words turned into an
// A fragment and multiplied into each token tile's sums. Two forms of the latter, as the kernel's
// token tiles choose:
// - offset_slice_column (1-2 token tiles, scaled sums): the codes in the offset form
//   (dequant.cuh: OffsetForm), unscaled; the group flush scales the sums and adds the correction;
// - scaled_slice_column (3-4 token tiles): each pair dequantized exactly (q - bias, or q - shift
//   with zero points) and scaled before its mma, since those tiles have no registers for scaled
//   sums.
// b holds the slice pair's activation fragments (ldmatrix.x4 of slices 2h and 2h + 1; `half`
// picks one).
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/dequant.cuh"
#include "common/ptx/ldmatrix.cuh"
#include "common/ptx/mma_sync.cuh"
#include "common/static_for.h"
#include "decode/decode_kernel.cuh"
#include "decode/tile_shapes.h"

namespace sailfish::decode::detail {

// The activation fragments of slice pair h (slices 2h and 2h + 1) for every token tile, by
// ldmatrix.x4 from the stage's rows at ldm_offset[tt][h], or from the zero chunk for lanes whose
// row is at or beyond M. Every tile but the last is full (token_tiles_for): its row addresses are
// tile 0's plus a constant, and only the last tile tests its rows (v23; before, an add and a
// select per tile).
template <int kTiles>
__device__ __forceinline__ void load_activation_fragments(uint32_t stage_address,
                                                          const uint32_t (&ldm_offset)[kTiles][2],
                                                          const bool (&row_valid)[kTiles], int h,
                                                          uint32_t zero_chunk,
                                                          uint32_t (&b)[kTiles][4]) {
  if constexpr (kTiles >= 2) {
    const uint32_t tile0 = stage_address + ldm_offset[0][h];
    gpu::static_for<kTiles - 1>([&](auto tile) {
      constexpr int tt = decltype(tile)::value;
      gpu::ldmatrix_x4_at<tt * kTokensPerTile * 128>(tile0, b[tt]);
    });
    gpu::ldmatrix_x4(row_valid[kTiles - 1] ? stage_address + ldm_offset[kTiles - 1][h] : zero_chunk,
                     b[kTiles - 1]);
  } else {
#pragma unroll
    for (int tt = 0; tt < kTiles; ++tt) {
      gpu::ldmatrix_x4(row_valid[tt] ? stage_address + ldm_offset[tt][h] : zero_chunk, b[tt]);
    }
  }
}

// kFromZero: the group's first slice, whose mma ignore the old sums (mma_m16n8k16_zero_c).
template <typename T, bool kFromZero>
__device__ __forceinline__ void slice_mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
  if constexpr (kFromZero) {
    gpu::mma_m16n8k16_zero_c<T>(d, a, b0, b1);
  } else {
    gpu::mma_m16n8k16<T>(d, a, b0, b1);
  }
}

// Slice s of the group's words (int4: word s; int8: words 2s and 2s + 1) in the offset form,
// into acc[tt] for every token tile. bf16 int8 splits each byte into its seven low bits and its
// top bit, two fragments that both meet the activations (dequant.cuh: int8_word_to_split_pairs).
template <typename T, int kBits, int kTiles, bool kFromZero, int kWords>
__device__ __forceinline__ void offset_slice_column(float (&acc)[kTiles][4],
                                                    const uint32_t (&words)[kWords], int s,
                                                    int half, const uint32_t (&b)[kTiles][4]) {
  constexpr bool kSplitBytes = kBits == 8 && std::is_same_v<T, __nv_bfloat16>;
  if constexpr (kBits == 4) {
    gpu::Pair<T> v[4];
    gpu::int4_word_to_offset_pairs<T>(words[s], v);
    uint32_t a[4];
    pairs_to_fragment(v, a);
#pragma unroll
    for (int tt = 0; tt < kTiles; ++tt) {
      slice_mma<T, kFromZero>(acc[tt], a, b[tt][2 * half], b[tt][2 * half + 1]);
    }
  } else if constexpr (!kSplitBytes) {  // fp16 int8
    __half2 column[2], column8[2];
    gpu::int8_word_to_offset_pairs(words[2 * s], column);
    gpu::int8_word_to_offset_pairs(words[2 * s + 1], column8);
    const uint32_t a[4] = {gpu::pair_bits(column[0]), gpu::pair_bits(column8[0]),
                           gpu::pair_bits(column[1]), gpu::pair_bits(column8[1])};
#pragma unroll
    for (int tt = 0; tt < kTiles; ++tt) {
      slice_mma<T, kFromZero>(acc[tt], a, b[tt][2 * half], b[tt][2 * half + 1]);
    }
  } else {  // bf16 int8: the low seven bits and the top bits, both against a
    __nv_bfloat162 low[2], high[2], low8[2], high8[2];
    gpu::int8_word_to_split_pairs(words[2 * s], low, high);
    gpu::int8_word_to_split_pairs(words[2 * s + 1], low8, high8);
    const uint32_t a_low[4] = {gpu::pair_bits(low[0]), gpu::pair_bits(low8[0]),
                               gpu::pair_bits(low[1]), gpu::pair_bits(low8[1])};
    const uint32_t a_high[4] = {gpu::pair_bits(high[0]), gpu::pair_bits(high8[0]),
                                gpu::pair_bits(high[1]), gpu::pair_bits(high8[1])};
#pragma unroll
    for (int tt = 0; tt < kTiles; ++tt) {
      slice_mma<T, kFromZero>(acc[tt], a_low, b[tt][2 * half], b[tt][2 * half + 1]);
      gpu::mma_m16n8k16<T>(acc[tt], a_high, b[tt][2 * half], b[tt][2 * half + 1]);
    }
  }
}

// Slice s of the group's words dequantized and scaled pair by pair, into total[tt]: the pairs
// (c, k0k1) (c, k8k9) (c+8, k0k1) (c+8, k8k9), each q - bias (q - shift) exactly, times the
// scales of columns `row` and `row + 8` of the stage's meta rows (plus the folds with zero
// points).
template <typename T, int kBits, int kTiles, bool kZeroPoints, int kWords>
__device__ __forceinline__ void scaled_slice_column(float (&total)[kTiles][4],
                                                    const uint32_t (&words)[kWords], int s,
                                                    int half, const uint32_t (&b)[kTiles][4],
                                                    const T* meta_scales,
                                                    const uint16_t* meta_shifts,
                                                    const T* meta_folds, int row) {
  gpu::Pair<T> v[4];
  if constexpr (kZeroPoints) {
    zero_point_pairs<T, kBits>(words, s, meta_scales, meta_shifts, meta_folds, row, v);
  } else {
    if constexpr (kBits == 4) {
      gpu::int4_word_to_pairs<T>(words[s], v);
    } else {
      gpu::int8_word_to_pairs<T>(words[2 * s], v);
      gpu::int8_word_to_pairs<T>(words[2 * s + 1], v + 2);
    }
    const T zero = static_cast<T>(0.0f);
    scale_and_fold<T>(v, meta_scales[row], meta_scales[row + 8], zero, zero);
  }
  uint32_t a[4];
  pairs_to_fragment(v, a);
#pragma unroll
  for (int tt = 0; tt < kTiles; ++tt) {
    gpu::mma_m16n8k16<T>(total[tt], a, b[tt][2 * half], b[tt][2 * half + 1]);
  }
}

}  // namespace sailfish::decode::detail
