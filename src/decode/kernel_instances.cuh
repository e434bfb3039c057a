// Definitions behind kernel_instances.h; included only by the per-type translation units.
#pragma once

#include "common/cuda_check.h"
#include "common/launch.cuh"
#include "common/shared_memory_limit.h"

#include <type_traits>
#include "decode/kernel_instances.h"

namespace sailfish::decode {

namespace detail {

// kZero picks the warp-split kernel's zero-point variant; the strip kernel reads it at run time.
template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero>
constexpr auto kernel_for() {
  if constexpr (kWarpSplit) {
    return decode_warp_split_kernel<T, kBits, kTiles, kZero>;
  } else {
    return decode_kernel<T, kBits, kTiles>;
  }
}

// The most dynamic shared memory an instance can be launched with: the warp-split kernel sizes its
// stages per problem (config.h), up to this.
template <int kBits, int kTiles, bool kWarpSplit>
constexpr int max_shared_for() {
  return kWarpSplit ? warp_split_max_shared_bytes(kBits, kTiles) : shared_bytes(kBits, kTiles);
}

template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero>
Status prepare(int shared) {
  constexpr int kMaxShared = max_shared_for<kBits, kTiles, kWarpSplit>();
  if (shared < 0 || shared > kMaxShared) {
    return internal_error("decode kernel: ", shared, " bytes of shared memory asked, the instance ",
                          "allows ", kMaxShared);
  }
  if constexpr (kMaxShared > 48 * 1024) {
    SF_RETURN_IF_ERROR(gpu::raise_shared_memory_limit(
        reinterpret_cast<const void*>(kernel_for<T, kBits, kTiles, kWarpSplit, kZero>()),
        kMaxShared));
  }
  return Status();
}

template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero>
Status launch_tiles(const DecodeParams& params, dim3 grid, int shared, bool pdl,
                    cudaStream_t stream) {
  SF_RETURN_IF_ERROR((prepare<T, kBits, kTiles, kWarpSplit, kZero>(shared)));
  const bool clustered = params.epilogue == Epilogue::kCluster;
  if (clustered && (!kWarpSplit || params.splits < 2 || params.splits > kMaxClusterSplits ||
                    grid.y != static_cast<unsigned>(params.splits))) {
    return internal_error("decode: the cluster epilogue needs the warp-split kernel and 2 to ",
                          kMaxClusterSplits, " splits (got ", params.splits, ")");
  }
  if constexpr (kWarpSplit && warp_split_stages_vary(kTiles)) {
    if (params.warp_stages != kWarpSplitFewStages && params.warp_stages != kStages) {
      return internal_error("decode: the warp-split kernel runs ", kWarpSplitFewStages, " or ",
                            kStages, " stages a warp (got ", params.warp_stages, ")");
    }
  }
  const dim3 cluster(1, clustered ? params.splits : 1, 1);
  return gpu::launch_in_clusters(kernel_for<T, kBits, kTiles, kWarpSplit, kZero>(), grid, cluster,
                                 dim3(kThreads), shared, stream, pdl, "decode kernel launch",
                                 params);
}

// How many clusters of cluster_size split CTAs (1 x cluster_size x 1) can be resident at once;
// 0 when the code that runs was compiled for a target before sm_90 (no cluster epilogue in it).
template <typename T, int kBits, int kTiles, bool kZero>
Status max_clusters_tiles(int shared, int cluster_size, int* clusters) {
  SF_RETURN_IF_ERROR((prepare<T, kBits, kTiles, true, kZero>(shared)));
  cudaFuncAttributes attributes = {};
  SF_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel_for<T, kBits, kTiles, true, kZero>()));
  if (attributes.ptxVersion < 90) {
    *clusters = 0;
    return Status();
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(1, cluster_size, 1);
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = shared;
  cudaLaunchAttribute attribute;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = 1;
  attribute.val.clusterDim.y = cluster_size;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  SF_CUDA_CHECK(cudaOccupancyMaxActiveClusters(
      clusters, kernel_for<T, kBits, kTiles, true, kZero>(), &config));
  return Status();
}

template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero>
Status occupancy_tiles(int shared, int* ctas_per_sm) {
  SF_RETURN_IF_ERROR((prepare<T, kBits, kTiles, kWarpSplit, kZero>(shared)));
  SF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      ctas_per_sm, kernel_for<T, kBits, kTiles, kWarpSplit, kZero>(), kThreads, shared));
  return Status();
}

// Calls f(tiles, warp_split, zero_points) with integral constants for the instance that serves
// (token_tiles, warp_split, zero_points); the strip kernel has one instance for both.
template <typename F>
Status dispatch(int token_tiles, bool warp_split, bool zero_points, F&& f) {
  using std::false_type;
  using std::true_type;
  auto warp_split_tiles = [&](auto zero) -> Status {
    switch (token_tiles) {
      case 1: return f(std::integral_constant<int, 1>(), true_type(), zero);
      case 2: return f(std::integral_constant<int, 2>(), true_type(), zero);
      case 3: return f(std::integral_constant<int, 3>(), true_type(), zero);
      case 4: return f(std::integral_constant<int, 4>(), true_type(), zero);
    }
    return internal_error("decode: no warp-split kernel instance for ", token_tiles,
                          " token tiles");
  };
  if (warp_split) {
    return zero_points ? warp_split_tiles(true_type()) : warp_split_tiles(false_type());
  }
  switch (token_tiles) {
    case 1: return f(std::integral_constant<int, 1>(), false_type(), false_type());
    case 2: return f(std::integral_constant<int, 2>(), false_type(), false_type());
    case 3: return f(std::integral_constant<int, 3>(), false_type(), false_type());
    case 4: return f(std::integral_constant<int, 4>(), false_type(), false_type());
    case 6: return f(std::integral_constant<int, 6>(), false_type(), false_type());
    case 8: return f(std::integral_constant<int, 8>(), false_type(), false_type());
  }
  return internal_error("decode: no kernel instance for ", token_tiles, " token tiles");
}

}  // namespace detail

template <typename T, int kBits>
Status launch_main_kernel(const DecodeParams& params, int token_tiles, bool warp_split, dim3 grid,
                          int shared_bytes, bool pdl, cudaStream_t stream) {
  return detail::dispatch(
      token_tiles, warp_split, params.zero_fold != nullptr, [&](auto tiles, auto split, auto zero) {
        return detail::launch_tiles<T, kBits, decltype(tiles)::value, decltype(split)::value,
                                    decltype(zero)::value>(params, grid, shared_bytes, pdl, stream);
      });
}

template <typename T, int kBits>
Status warp_split_max_clusters(int token_tiles, bool zero_points, int shared_bytes,
                               int cluster_size, int* clusters) {
  return detail::dispatch(
      token_tiles, true, zero_points, [&](auto tiles, auto split, auto zero) -> Status {
        if constexpr (decltype(split)::value) {
          return detail::max_clusters_tiles<T, kBits, decltype(tiles)::value,
                                            decltype(zero)::value>(shared_bytes, cluster_size,
                                                                   clusters);
        } else {
          return internal_error("decode: clusters are for the warp-split kernel only");
        }
      });
}

template <typename T, int kBits>
Status main_kernel_occupancy(int token_tiles, bool warp_split, bool zero_points, int shared_bytes,
                             int* ctas_per_sm) {
  return detail::dispatch(
      token_tiles, warp_split, zero_points, [&](auto tiles, auto split, auto zero) {
        return detail::occupancy_tiles<T, kBits, decltype(tiles)::value, decltype(split)::value,
                                       decltype(zero)::value>(shared_bytes, ctas_per_sm);
      });
}

}  // namespace sailfish::decode
