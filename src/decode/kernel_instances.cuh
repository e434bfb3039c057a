// Definitions behind kernel_instances.h; included only by the per-type translation units.
#pragma once

#include "common/cuda_check.h"
#include "common/launch.cuh"
#include "common/shared_memory_limit.h"

#include <type_traits>
#include "decode/kernel_instances.h"

namespace sailfish::decode {

namespace detail {

// kZero picks the warp-split kernel's zero-point variant (the strip kernel reads it at run time),
// kDeep its deep-pipeline instance (1-2 token tiles: kWarpSplitDeepStages stages a warp).
constexpr int stage_count(bool deep) { return deep ? kWarpSplitDeepStages : kStages; }

template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero, bool kDeep>
constexpr auto kernel_for() {
  if constexpr (kWarpSplit) {
    return decode_warp_split_kernel<T, kBits, kTiles, kZero, stage_count(kDeep)>;
  } else {
    return decode_kernel<T, kBits, kTiles>;
  }
}

// The most dynamic shared memory an instance can be launched with: the warp-split kernel sizes its
// stages per problem (config.h), up to this.
template <int kBits, int kTiles, bool kWarpSplit, bool kDeep>
constexpr int max_shared_for() {
  return kWarpSplit ? warp_split_max_shared_bytes(kBits, kTiles, stage_count(kDeep))
                    : shared_bytes(kBits, kTiles);
}

template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero, bool kDeep>
Status prepare(int shared) {
  constexpr int kMaxShared = max_shared_for<kBits, kTiles, kWarpSplit, kDeep>();
  if (shared < 0 || shared > kMaxShared) {
    return internal_error("decode kernel: ", shared, " bytes of shared memory asked, the instance ",
                          "allows ", kMaxShared);
  }
  if constexpr (kMaxShared > 48 * 1024) {
    SF_RETURN_IF_ERROR(gpu::raise_shared_memory_limit(
        reinterpret_cast<const void*>(kernel_for<T, kBits, kTiles, kWarpSplit, kZero, kDeep>()),
        kMaxShared));
  }
  return Status();
}

template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero, bool kDeep>
Status launch_tiles(const DecodeParams& params, dim3 grid, int shared, bool pdl,
                    cudaStream_t stream) {
  SF_RETURN_IF_ERROR((prepare<T, kBits, kTiles, kWarpSplit, kZero, kDeep>(shared)));
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
  } else if constexpr (kWarpSplit) {
    // 1-2 token tiles: each stage count is an instance of its own; the plan sized shared memory
    // for the count it asked for.
    if (params.warp_stages != stage_count(kDeep)) {
      return internal_error("decode: no warp-split kernel instance for ", kTiles,
                            " token tiles and ", params.warp_stages, " stages a warp (",
                            kBits, "-bit codes)");
    }
  }
  const dim3 cluster(1, clustered ? params.splits : 1, 1);
  return gpu::launch_in_clusters(kernel_for<T, kBits, kTiles, kWarpSplit, kZero, kDeep>(), grid,
                                 cluster, dim3(kThreads), shared, stream, pdl,
                                 "decode kernel launch", params);
}

// How many clusters of cluster_size split CTAs (1 x cluster_size x 1) can be resident at once;
// 0 when the code that runs was compiled for a target before sm_90 (no cluster epilogue in it).
template <typename T, int kBits, int kTiles, bool kZero, bool kDeep>
Status max_clusters_tiles(int shared, int cluster_size, int* clusters) {
  SF_RETURN_IF_ERROR((prepare<T, kBits, kTiles, true, kZero, kDeep>(shared)));
  cudaFuncAttributes attributes = {};
  SF_CUDA_CHECK(
      cudaFuncGetAttributes(&attributes, kernel_for<T, kBits, kTiles, true, kZero, kDeep>()));
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
      clusters, kernel_for<T, kBits, kTiles, true, kZero, kDeep>(), &config));
  return Status();
}

template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero, bool kDeep>
Status occupancy_tiles(int shared, int* ctas_per_sm) {
  SF_RETURN_IF_ERROR((prepare<T, kBits, kTiles, kWarpSplit, kZero, kDeep>(shared)));
  SF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      ctas_per_sm, kernel_for<T, kBits, kTiles, kWarpSplit, kZero, kDeep>(), kThreads, shared));
  return Status();
}

// Calls f(tiles, warp_split, zero_points, deep) with integral constants for the instance that
// serves (token_tiles, warp_split, zero_points, warp_stages): the warp-split kernel at 1-2 token
// tiles may have a deep-pipeline instance (warp_stages == kWarpSplitDeepStages, config.h:
// warp_split_has_deep); the strip kernel has one instance for both zero-point kinds.
template <int kBits, typename F>
Status dispatch(int token_tiles, bool warp_split, bool zero_points, int warp_stages, F&& f) {
  using std::false_type;
  using std::true_type;
  auto warp_split_tiles = [&](auto zero) -> Status {
    const bool deep = warp_stages == kWarpSplitDeepStages;
    switch (token_tiles) {
      case 1:
        if constexpr (warp_split_has_deep(kBits, 1)) {
          if (deep) return f(std::integral_constant<int, 1>(), true_type(), zero, true_type());
        }
        return f(std::integral_constant<int, 1>(), true_type(), zero, false_type());
      case 2:
        if constexpr (warp_split_has_deep(kBits, 2)) {
          if (deep) return f(std::integral_constant<int, 2>(), true_type(), zero, true_type());
        }
        return f(std::integral_constant<int, 2>(), true_type(), zero, false_type());
      case 3: return f(std::integral_constant<int, 3>(), true_type(), zero, false_type());
      case 4: return f(std::integral_constant<int, 4>(), true_type(), zero, false_type());
    }
    return internal_error("decode: no warp-split kernel instance for ", token_tiles,
                          " token tiles");
  };
  if (warp_split) {
    return zero_points ? warp_split_tiles(true_type()) : warp_split_tiles(false_type());
  }
  const false_type no;
  switch (token_tiles) {
    case 1: return f(std::integral_constant<int, 1>(), no, no, no);
    case 2: return f(std::integral_constant<int, 2>(), no, no, no);
    case 3: return f(std::integral_constant<int, 3>(), no, no, no);
    case 4: return f(std::integral_constant<int, 4>(), no, no, no);
    case 6: return f(std::integral_constant<int, 6>(), no, no, no);
    case 8: return f(std::integral_constant<int, 8>(), no, no, no);
  }
  return internal_error("decode: no kernel instance for ", token_tiles, " token tiles");
}

}  // namespace detail

template <typename T, int kBits>
Status launch_main_kernel(const DecodeParams& params, int token_tiles, bool warp_split, dim3 grid,
                          int shared_bytes, bool pdl, cudaStream_t stream) {
  return detail::dispatch<kBits>(
      token_tiles, warp_split, params.zero_fold != nullptr, params.warp_stages,
      [&](auto tiles, auto split, auto zero, auto deep) {
        return detail::launch_tiles<T, kBits, decltype(tiles)::value, decltype(split)::value,
                                    decltype(zero)::value, decltype(deep)::value>(
            params, grid, shared_bytes, pdl, stream);
      });
}

template <typename T, int kBits>
Status warp_split_max_clusters(int token_tiles, bool zero_points, int warp_stages,
                               int shared_bytes, int cluster_size, int* clusters) {
  return detail::dispatch<kBits>(
      token_tiles, true, zero_points, warp_stages,
      [&](auto tiles, auto split, auto zero, auto deep) -> Status {
        if constexpr (decltype(split)::value) {
          return detail::max_clusters_tiles<T, kBits, decltype(tiles)::value,
                                            decltype(zero)::value, decltype(deep)::value>(
              shared_bytes, cluster_size, clusters);
        } else {
          return internal_error("decode: clusters are for the warp-split kernel only");
        }
      });
}

template <typename T, int kBits>
Status main_kernel_occupancy(int token_tiles, bool warp_split, bool zero_points, int warp_stages,
                             int shared_bytes, int* ctas_per_sm) {
  return detail::dispatch<kBits>(
      token_tiles, warp_split, zero_points, warp_stages,
      [&](auto tiles, auto split, auto zero, auto deep) {
        return detail::occupancy_tiles<T, kBits, decltype(tiles)::value, decltype(split)::value,
                                       decltype(zero)::value, decltype(deep)::value>(
            shared_bytes, ctas_per_sm);
      });
}

}  // namespace sailfish::decode
