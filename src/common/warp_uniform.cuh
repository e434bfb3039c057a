// A value every lane of a warp already holds, made known to the compiler as warp-uniform.
#pragma once

namespace sailfish::gpu {

// Lane 0's value, broadcast with __shfl_sync: the compiler can then keep what derives from it
// (k ranges, stage cursors, descriptors) in uniform registers, which it does not for an index
// computed from threadIdx.x. Measured on the H200: the decode kernels' warp index, 1-3% fewer
// main-loop instructions and 0.983-0.996x the time at M = 1 (decode v26); the prefill tier's
// warpgroup role with one CTA an SM, 600 -> 579 instructions a 128-token loop (prefill v15).
__device__ __forceinline__ int warp_uniform(int value) {
  return __shfl_sync(0xffffffffu, value, 0);
}

}  // namespace sailfish::gpu
