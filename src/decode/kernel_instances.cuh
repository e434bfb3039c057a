// Definitions behind kernel_instances.h; included only by the per-type translation units.
#pragma once

#include "common/cuda_check.h"
#include "common/launch.cuh"

#include <type_traits>
#include "decode/kernel_instances.h"

namespace sailfish::decode {

namespace detail {

template <typename T, int kBits, int kTiles, bool kWarpSplit>
constexpr auto kernel_for() {
  if constexpr (kWarpSplit) {
    return decode_warp_split_kernel<T, kBits, kTiles>;
  } else {
    return decode_kernel<T, kBits, kTiles>;
  }
}

template <int kBits, int kTiles, bool kWarpSplit>
constexpr int shared_for() {
  return kWarpSplit ? warp_split_shared_bytes(kBits, kTiles) : shared_bytes(kBits, kTiles);
}

template <typename T, int kBits, int kTiles, bool kWarpSplit>
Status prepare(int* shared) {
  constexpr int kShared = shared_for<kBits, kTiles, kWarpSplit>();
  if constexpr (kShared > 48 * 1024) {
    SF_CUDA_CHECK(cudaFuncSetAttribute(kernel_for<T, kBits, kTiles, kWarpSplit>(),
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, kShared));
  }
  *shared = kShared;
  return Status();
}

template <typename T, int kBits, int kTiles, bool kWarpSplit>
Status launch_tiles(const DecodeParams& params, dim3 grid, bool pdl, cudaStream_t stream) {
  int shared = 0;
  SF_RETURN_IF_ERROR((prepare<T, kBits, kTiles, kWarpSplit>(&shared)));
  return gpu::launch(kernel_for<T, kBits, kTiles, kWarpSplit>(), grid, dim3(kThreads), shared,
                     stream, pdl, "decode kernel launch", params);
}

template <typename T, int kBits, int kTiles, bool kWarpSplit>
Status occupancy_tiles(int* ctas_per_sm) {
  int shared = 0;
  SF_RETURN_IF_ERROR((prepare<T, kBits, kTiles, kWarpSplit>(&shared)));
  SF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      ctas_per_sm, kernel_for<T, kBits, kTiles, kWarpSplit>(), kThreads, shared));
  return Status();
}

// Calls F<kTiles, kWarpSplit>() for the instance that serves (token_tiles, warp_split).
template <typename F>
Status dispatch(int token_tiles, bool warp_split, F&& f) {
  if (warp_split) {
    switch (token_tiles) {
      case 1: return f(std::integral_constant<int, 1>(), std::true_type());
      case 2: return f(std::integral_constant<int, 2>(), std::true_type());
      case 3: return f(std::integral_constant<int, 3>(), std::true_type());
      case 4: return f(std::integral_constant<int, 4>(), std::true_type());
    }
  } else {
    switch (token_tiles) {
      case 1: return f(std::integral_constant<int, 1>(), std::false_type());
      case 2: return f(std::integral_constant<int, 2>(), std::false_type());
      case 3: return f(std::integral_constant<int, 3>(), std::false_type());
      case 4: return f(std::integral_constant<int, 4>(), std::false_type());
      case 6: return f(std::integral_constant<int, 6>(), std::false_type());
      case 8: return f(std::integral_constant<int, 8>(), std::false_type());
    }
  }
  return internal_error("decode: no kernel instance for ", token_tiles, " token tiles",
                        warp_split ? " (warp split)" : "");
}

}  // namespace detail

template <typename T, int kBits>
Status launch_main_kernel(const DecodeParams& params, int token_tiles, bool warp_split, dim3 grid,
                          bool pdl, cudaStream_t stream) {
  return detail::dispatch(token_tiles, warp_split, [&](auto tiles, auto split) {
    return detail::launch_tiles<T, kBits, decltype(tiles)::value, decltype(split)::value>(
        params, grid, pdl, stream);
  });
}

template <typename T, int kBits>
Status main_kernel_occupancy(int token_tiles, bool warp_split, int* ctas_per_sm) {
  return detail::dispatch(token_tiles, warp_split, [&](auto tiles, auto split) {
    return detail::occupancy_tiles<T, kBits, decltype(tiles)::value, decltype(split)::value>(
        ctas_per_sm);
  });
}

}  // namespace sailfish::decode
