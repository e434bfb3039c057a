// The group flush of the warp-split kernel's scaled sums (1-2 token tiles; warp_split_kernel.cuh
// explains the offset form): a group's unscaled sums acc, plus each token's correction, times the
// group's scales into the running totals.
//
// The correction mma leaves, for token g, the slice pair's k 0-7 and k 8-15 halves in
// correction[tt][0..3] of lanes 4g .. 4g + 3 (c[0] + c[2] the first slice, c[1] + c[3] the
// second). The flush moves each token's correction to the accumulator layout with two shuffles:
// tokens 2t and 2t + 1 of the accumulators (t = lane % 4) are those of lanes 8t and 8t + 4.
#pragma once

#include <cstdint>

#include "common/dequant.cuh"

namespace sailfish::decode::detail {

// first_slice_only: the group ended between the two slices of the last pair (groups of 16), so
// only the first slice's correction belongs to it. zero_sums: zero acc and the correction for the
// next group (the fused group start with kGroupsStartFromZero leaves them to the zero-C mma).
// group_zero: offset_zero_coefficient of the same columns, read only with zero points.
template <typename T, int kBits, int kTiles, bool kZeroPoints>
__device__ __forceinline__ void flush_group_sums(float (&total)[4][kTiles][4],
                                                 float (&acc)[4][kTiles][4],
                                                 float (&correction)[kTiles][4],
                                                 const float (&group_scale)[4][2],
                                                 const float (&group_zero)[4][2], int lane,
                                                 bool first_slice_only, bool zero_sums) {
  using Form = gpu::OffsetForm<T, kBits>;
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
    const float even = __shfl_sync(0xffffffffu, token_sum, (lane & 3) * 8);
    const float odd = __shfl_sync(0xffffffffu, token_sum, (lane & 3) * 8 + 4);
    [[maybe_unused]] float even_unit = even, odd_unit = odd;
    if constexpr (kZeroPoints && Form::kSplitOffsets) {
      even_unit = __shfl_sync(0xffffffffu, unit_sum, (lane & 3) * 8);
      odd_unit = __shfl_sync(0xffffffffu, unit_sum, (lane & 3) * 8 + 4);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float token_correction = i & 1 ? odd : even;
        float& t = total[j][tt][i];
        if constexpr (kZeroPoints) {
          t = fmaf(group_zero[j][i / 2], i & 1 ? odd_unit : even_unit, t);
        }
        t = fmaf(group_scale[j][i / 2], acc[j][tt][i] + token_correction, t);
        if (zero_sums) acc[j][tt][i] = 0.0f;
      }
      if (zero_sums && (!first_slice_only || i % 2 == 0)) c[i] = 0.0f;
    }
  }
}

}  // namespace sailfish::decode::detail
