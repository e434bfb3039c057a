// Bulk asynchronous copies (sm_90), completing on an mbarrier with a byte count:
//   - bulk_copy: a contiguous run of bytes (a packed 64 x 64 weight block, a scale row): no tensor
//     map, 16-byte aligned addresses, a multiple of 16 bytes;
//   - tma_load_2d: a box of a 2D tensor described by a CUtensorMap (the activations, written into
//     shared memory with the 128-byte swizzle wgmma's descriptor expects; rows and columns past
//     the tensor's extent arrive as zeros and still count toward the byte total).
#pragma once

#include <cstdint>

namespace sailfish::gpu {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes,
                                          uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void* tensor_map, int32_t x,
                                            int32_t y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(tensor_map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

__device__ __forceinline__ void prefetch_tensor_map(const void* tensor_map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(tensor_map) : "memory");
}

#endif

}  // namespace sailfish::gpu
