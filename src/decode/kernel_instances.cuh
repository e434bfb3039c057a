// Definitions behind kernel_instances.h; included only by the per-type translation units.
#pragma once

#include "common/cuda_check.h"
#include "common/launch.cuh"
#include "decode/kernel_instances.h"

namespace sailfish::decode {

namespace detail {

template <typename T, int kBits, int kTiles>
Status launch_tiles(const DecodeParams& params, dim3 grid, bool pdl, cudaStream_t stream) {
  constexpr int kShared = shared_bytes(kBits, kTiles);
  auto kernel = decode_kernel<T, kBits, kTiles>;
  if constexpr (kShared > 48 * 1024) {
    SF_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kShared));
  }
  return gpu::launch(kernel, grid, dim3(kThreads), kShared, stream, pdl, "decode_kernel launch",
                     params);
}

template <typename T, int kBits, int kTiles>
Status occupancy_tiles(int* ctas_per_sm) {
  constexpr int kShared = shared_bytes(kBits, kTiles);
  auto kernel = decode_kernel<T, kBits, kTiles>;
  if constexpr (kShared > 48 * 1024) {
    SF_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kShared));
  }
  SF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas_per_sm, kernel, kThreads,
                                                              kShared));
  return Status();
}

}  // namespace detail

template <typename T, int kBits>
Status launch_main_kernel(const DecodeParams& params, int token_tiles, dim3 grid, bool pdl,
                          cudaStream_t stream) {
  switch (token_tiles) {
    case 1: return detail::launch_tiles<T, kBits, 1>(params, grid, pdl, stream);
    case 2: return detail::launch_tiles<T, kBits, 2>(params, grid, pdl, stream);
    case 3: return detail::launch_tiles<T, kBits, 3>(params, grid, pdl, stream);
    case 4: return detail::launch_tiles<T, kBits, 4>(params, grid, pdl, stream);
    case 6: return detail::launch_tiles<T, kBits, 6>(params, grid, pdl, stream);
    case 8: return detail::launch_tiles<T, kBits, 8>(params, grid, pdl, stream);
  }
  return internal_error("decode: no kernel instance for ", token_tiles, " token tiles");
}

template <typename T, int kBits>
Status main_kernel_occupancy(int token_tiles, int* ctas_per_sm) {
  switch (token_tiles) {
    case 1: return detail::occupancy_tiles<T, kBits, 1>(ctas_per_sm);
    case 2: return detail::occupancy_tiles<T, kBits, 2>(ctas_per_sm);
    case 3: return detail::occupancy_tiles<T, kBits, 3>(ctas_per_sm);
    case 4: return detail::occupancy_tiles<T, kBits, 4>(ctas_per_sm);
    case 6: return detail::occupancy_tiles<T, kBits, 6>(ctas_per_sm);
    case 8: return detail::occupancy_tiles<T, kBits, 8>(ctas_per_sm);
  }
  return internal_error("decode: no kernel instance for ", token_tiles, " token tiles");
}

}  // namespace sailfish::decode
