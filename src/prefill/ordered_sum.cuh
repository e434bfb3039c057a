// The split-K reduce's and the Stream-K fixup's shared steps: the sum of a quad of columns over
// its pieces, and its store.
//
// ordered_sum adds `count` fp32 pieces of four columns each in index order. Loads go out Batch
// at a time, predicated, before any add, so one round trip to L2 or DRAM serves up to that many
// pieces; the adds stay in index order, so the bits do not depend on the batching. Measured on
// the H200 (perf/prefill.md, v16b): the reduce wants 8 (four, then the rest one by one, ran
// l3-8b.o at M = 64, 8 splits, 1.09x slower than one float a thread), the fixup 4 (its tiles have
// 2-3 pieces, and 8 took it from 39 to 60 registers, six CTAs an SM to four: 0.4-7% slower).
#pragma once

namespace sailfish::prefill {

// piece(i) is the address of piece i (16-byte aligned); count >= 1.
template <int Batch, typename PieceAddress>
__device__ __forceinline__ float4 ordered_sum(int count, PieceAddress piece) {
  float4 sum = *piece(0);
  for (int base = 1; base < count; base += Batch) {
    float4 v[Batch];
#pragma unroll
    for (int i = 0; i < Batch; ++i) {
      if (base + i < count) v[i] = *piece(base + i);
    }
#pragma unroll
    for (int i = 0; i < Batch; ++i) {
      if (base + i < count) {
        sum.x += v[i].x;
        sum.y += v[i].y;
        sum.z += v[i].z;
        sum.w += v[i].w;
      }
    }
  }
  return sum;
}

// Y[col .. col + 3] of one token (out points at Y[token][col]) = sum (+ bias), the columns past n
// left alone: one rounding to 16 bits.
template <typename T>
__device__ __forceinline__ void store_four_columns(T* out, const float4 sum, int col, int n,
                                                   const T* bias) {
  const float values[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (col + i >= n) break;
    out[i] = static_cast<T>(bias != nullptr ? values[i] + static_cast<float>(bias[col + i])
                                            : values[i]);
  }
}

}  // namespace sailfish::prefill
