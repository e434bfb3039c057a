// bar.sync with an id and a thread count: a barrier for a subset of the CTA's warps (one
// warpgroup: id 1 + warpgroup, 128 threads), leaving id 0 to __syncthreads.
#pragma once

#include <cstdint>

namespace sailfish::gpu {

__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace sailfish::gpu
