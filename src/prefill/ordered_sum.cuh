// The sum, in index order, of `count` fp32 pieces of four columns each: the inner step of the
// split-K reduce and the Stream-K fixup. Loads go out Batch at a time, predicated,
// before any add, so one round trip to L2 or DRAM serves up to that many pieces; the adds stay in
// index order, so the bits do not depend on the batching. (Batches of four with a one-by-one tail
// ran l3-8b.o at M = 64, 8 splits, 1.09x slower than one float a thread: five round trips against
// two; perf/prefill.md, v16b.)
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

}  // namespace sailfish::prefill
