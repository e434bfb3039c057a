// The group flush of the warp-split kernel's scaled sums (1-2 token tiles; warp_split_kernel.cuh
// explains the offset form): a group's unscaled sums acc, plus each token's correction, times the
// group's scales into the running totals.
//
// The correction mma leaves, for token g, the slice pair's k 0-7 and k 8-15 halves in
// correction[tt][0..3] of lanes 4g .. 4g + 3 (c[0] + c[2] the first slice, c[1] + c[3] the
// second). The accumulators hold tokens 2t and 2t + 1 (t = lane % 4) as columns. Two ways from
// one layout to the other (corrects_by_mma picks):
// - two shuffles, from lanes 8t and 8t + 4, and an add to each accumulator before its scale
//   multiply-add (16 FADD a tile);
// - one mma a column group against a ones A fragment (v54, bf16 int8 at one token tile). Its B
//   fragment is each lane's token sum split exactly into three bf16 (split_into_bf16_triple), so
//   column g adds up quad g's entries into every row. The correction mma then feeds only lane 4g
//   (its B constant is nonzero in columns 0 and 1 only; warp_split_kernel.cuh) and lanes
//   4g + 1 .. 4g + 3 add zeros. Four mma and six integer and FADD instructions a tile replace the
//   shuffles and adds. int8's slices keep the FMA pipe busier than int4's, which may be why only
//   int8 gained: with the weights in the L2 on an H100, bf16 int8 at M = 1-8 ran 0.986-0.990x
//   (geometric means), but bf16 int4 0.996x at one tile and 1.023x at two, fp16 int4 1.011x and
//   1.045x, int8 at two tiles 1.001x (docs/perf/decode.md, v54). fp16 int8 ran 0.994-1.000x, and
//   its five- and six-stage instances took 139 registers instead of 128 (3 CTAs an SM instead of
//   4), so it keeps the shuffles too. Zero points keep them as well: they also need the sum times
//   a per-column coefficient.
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/bf16_triple.h"
#include "common/dequant.cuh"
#include "common/ptx/mma_sync.cuh"

namespace sailfish::decode::detail {

// Whether the flush adds the correction by mma (above), which needs the correction mma's sums in
// lane 4g only.
template <typename T, int kBits, int kTiles, bool kZeroPoints>
constexpr bool corrects_by_mma() {
  return std::is_same_v<T, __nv_bfloat16> && kBits == 8 && kTiles == 1 && !kZeroPoints;
}

// first_slice_only: the group ended between the two slices of the last pair (groups of 16), so
// only the first slice's correction belongs to it. zero_sums: zero acc and the correction for the
// next group (the fused group start with kGroupsStartFromZero leaves them to the zero-C mma).
// group_zero: offset_zero_coefficient of the same columns, read only with zero points.
template <typename T, int kBits, int kTiles, bool kZeroPoints>
__device__ __forceinline__ void flush_group_sums(float (&total)[4][kTiles][4],
                                                 float (&acc)[4][kTiles][4],
                                                 float (&correction)[kTiles][4],
                                                 const float (&group_scale)[4][2],
                                                 const float (&group_zero)[4][2],
                                                 [[maybe_unused]] int lane,
                                                 bool first_slice_only, bool zero_sums) {
  using Form = gpu::OffsetForm<T, kBits>;
  constexpr bool kCorrectionMma = corrects_by_mma<T, kBits, kTiles, kZeroPoints>();
#pragma unroll
  for (int tt = 0; tt < kTiles; ++tt) {
    float* c = correction[tt];
    // token_sum: the offsets times the token's activations, negated; unit_sum: -unit * sum(a),
    // the zero points' multiple (the same value where the halves share one offset).
    float token_sum;
    [[maybe_unused]] float unit_sum;
    if constexpr (Form::kSplitOffsets) {
      const float low = first_slice_only ? c[0] : c[0] + c[1];
      const float high = first_slice_only ? c[2] : c[2] + c[3];
      token_sum = fmaf(Form::kLowOffset, low, Form::kHighOffset * high);
      unit_sum = low + high;
    } else {
      token_sum = first_slice_only ? c[0] + c[2] : (c[0] + c[2]) + (c[1] + c[3]);
      unit_sum = token_sum;
    }
    // Shuffled form: tokens 2t and 2t + 1's corrections (and unit sums, with zero points).
    [[maybe_unused]] float even = 0.0f, odd = 0.0f, even_unit = 0.0f, odd_unit = 0.0f;
    if constexpr (kCorrectionMma) {
      constexpr uint32_t kOnes = 0x3f803f80u;  // bf16 {1, 1}
      constexpr uint32_t kOnesFragment[4] = {kOnes, kOnes, kOnes, kOnes};
      const sailfish::detail::Bf16Triple b = sailfish::detail::split_into_bf16_triple(token_sum);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        gpu::mma_m16n8k16<__nv_bfloat16>(acc[j][tt], kOnesFragment, b.b0, b.b1);
      }
    } else {
      even = even_unit = __shfl_sync(0xffffffffu, token_sum, (lane & 3) * 8);
      odd = odd_unit = __shfl_sync(0xffffffffu, token_sum, (lane & 3) * 8 + 4);
      if constexpr (kZeroPoints && Form::kSplitOffsets) {
        even_unit = __shfl_sync(0xffffffffu, unit_sum, (lane & 3) * 8);
        odd_unit = __shfl_sync(0xffffffffu, unit_sum, (lane & 3) * 8 + 4);
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float& t = total[j][tt][i];
        if constexpr (kZeroPoints) {
          t = fmaf(group_zero[j][i / 2], i & 1 ? odd_unit : even_unit, t);
        }
        if constexpr (kCorrectionMma) {
          t = fmaf(group_scale[j][i / 2], acc[j][tt][i], t);
        } else {
          t = fmaf(group_scale[j][i / 2], acc[j][tt][i] + (i & 1 ? odd : even), t);
        }
        if (zero_sums) acc[j][tt][i] = 0.0f;
      }
      if (zero_sums && (!first_slice_only || i % 2 == 0)) c[i] = 0.0f;
    }
  }
}

}  // namespace sailfish::decode::detail
