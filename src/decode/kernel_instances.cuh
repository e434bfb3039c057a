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
// kStageCount its stages a warp (kStages, or at 1-2 token tiles a deep-pipeline count:
// warp_split_deep_stages, warp_split_lighter_deep_stages; the strip kernel ignores it), kStreamK
// its Stream-K instance (int4 at 1-2 token tiles: stream_k_grid.h, stream_k_plan).
constexpr bool has_stream_k(int bits, int tiles) { return bits == 4 && tiles <= 2; }

template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero, int kStageCount,
          bool kStreamK, int kWarpCount, bool kMoe = false>
constexpr auto kernel_for() {
  if constexpr (kWarpSplit) {
    return decode_warp_split_kernel<T, kBits, kTiles, kZero, kStageCount, kStreamK, kWarpCount,
                                    kMoe>;
  } else {
    return decode_kernel<T, kBits, kTiles>;
  }
}

// The most dynamic shared memory an instance can be launched with: the warp-split kernel sizes its
// stages per problem (warp_split_instances.h), up to this; Stream-K adds each warp's slot-0
// parking, the split grid at 1-2 token tiles the cluster push form's largest receive area.
template <int kBits, int kTiles, bool kWarpSplit, int kStageCount, bool kStreamK, int kWarpCount>
constexpr int max_shared_for() {
  constexpr int kPushArea = kTiles <= kClusterPushMaxTiles ? cluster_receive_max_bytes(kTiles) : 0;
  return kWarpSplit ? warp_split_max_shared_bytes(kBits, kTiles, kStageCount, kWarpCount) +
                          (kStreamK ? kWarpCount * stream_k_park_bytes(kTiles) : kPushArea)
                    : shared_bytes(kBits, kTiles);
}

// Threads a CTA of the instance (the strip kernel: kThreads).
template <bool kWarpSplit, int kWarpCount>
constexpr int threads_for() {
  return kWarpSplit ? kWarpCount * 32 : kThreads;
}

// The warp-split kernel may also be launched with more, up to kMaxLaunchSharedBytes, where its
// plan pads shared memory to spread the grid over the SMs (launch.cu, spread_over_sms).
template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero, int kStageCount,
          bool kStreamK, int kWarpCount, bool kMoe = false>
Status prepare(int shared) {
  constexpr int kMaxShared =
      max_shared_for<kBits, kTiles, kWarpSplit, kStageCount, kStreamK, kWarpCount>();
  constexpr int kMaxAsked = kWarpSplit ? kMaxLaunchSharedBytes : kMaxShared;
  if (shared < 0 || shared > kMaxAsked) {
    return internal_error("decode kernel: ", shared, " bytes of shared memory asked, the instance ",
                          "allows ", kMaxAsked);
  }
  const int limit = shared > kMaxShared ? shared : kMaxShared;
  if (limit > 48 * 1024) {
    SF_RETURN_IF_ERROR(gpu::raise_shared_memory_limit(
        reinterpret_cast<const void*>(kernel_for<T, kBits, kTiles, kWarpSplit, kZero, kStageCount,
                                                 kStreamK, kWarpCount, kMoe>()),
        limit));
  }
  return Status();
}

template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero, int kStageCount,
          bool kStreamK, int kWarpCount, bool kMoe = false>
Status launch_tiles(const DecodeParams& params, dim3 grid, int shared, bool pdl,
                    cudaStream_t stream) {
  SF_RETURN_IF_ERROR(
      (prepare<T, kBits, kTiles, kWarpSplit, kZero, kStageCount, kStreamK, kWarpCount, kMoe>(
          shared)));
  const bool clustered = params.epilogue == Epilogue::kCluster;
  if (clustered && (!kWarpSplit || params.splits < 2 || params.splits > kMaxClusterSplits ||
                    grid.y != static_cast<unsigned>(params.splits))) {
    return internal_error("decode: the cluster epilogue needs the warp-split kernel and 2 to ",
                          kMaxClusterSplits, " splits (got ", params.splits, ")");
  }
  if (params.cluster_push != 0 &&
      (!kWarpSplit || kStreamK || !clustered || kTiles > kClusterPushMaxTiles ||
       shared < kWarpCount * warp_split_region_bytes(params.warp_stage_bytes, params.warp_stages) +
                    cluster_receive_bytes(params.splits, kTiles))) {
    return internal_error("decode: the cluster push form needs the split grid's cluster epilogue "
                          "at 1 to ", kClusterPushMaxTiles, " token tiles and its receive area in ",
                          "the ", shared, " bytes of shared memory planned");
  }
  if (kStreamK && (!clustered || params.stream_k_strips < 1 ||
                   params.stream_k_strips > kStreamKMaxStrips ||
                   grid.x * static_cast<int64_t>(params.stream_k_strips) <
                       int64_t(params.n_pad / 64))) {
    return internal_error("decode: a Stream-K grid needs the cluster epilogue and 1 to ",
                          kStreamKMaxStrips, " strips a cluster covering every strip (got ",
                          params.stream_k_strips, " strips, ", grid.x, " clusters)");
  }
  if constexpr (kWarpSplit && warp_split_stages_vary(kTiles)) {
    if (params.warp_stages != kWarpSplitFewStages && params.warp_stages != kStages) {
      return internal_error("decode: the warp-split kernel runs ", kWarpSplitFewStages, " or ",
                            kStages, " stages a warp (got ", params.warp_stages, ")");
    }
  } else if constexpr (kWarpSplit) {
    // 1-2 token tiles: each stage count is an instance of its own; the plan sized shared memory
    // for the count it asked for.
    if (params.warp_stages != kStageCount) {
      return internal_error("decode: no warp-split kernel instance for ", kTiles,
                            " token tiles and ", params.warp_stages, " stages a warp (",
                            kBits, "-bit codes)");
    }
  }
  const dim3 cluster(1, clustered ? params.splits : 1, 1);
  return gpu::launch_in_clusters(
      kernel_for<T, kBits, kTiles, kWarpSplit, kZero, kStageCount, kStreamK, kWarpCount, kMoe>(),
      grid, cluster, dim3(threads_for<kWarpSplit, kWarpCount>()), shared, stream, pdl,
      "decode kernel launch", params);
}

// How many clusters of cluster_size split CTAs (1 x cluster_size x 1) can be resident at once;
// 0 when the code that runs was compiled for a target before sm_90 (no cluster epilogue in it).
template <typename T, int kBits, int kTiles, bool kZero, int kStageCount, bool kStreamK,
          int kWarpCount, bool kMoe = false>
Status max_clusters_tiles(int shared, int cluster_size, int* clusters) {
  SF_RETURN_IF_ERROR(
      (prepare<T, kBits, kTiles, true, kZero, kStageCount, kStreamK, kWarpCount, kMoe>(shared)));
  constexpr auto kernel =
      kernel_for<T, kBits, kTiles, true, kZero, kStageCount, kStreamK, kWarpCount, kMoe>();
  cudaFuncAttributes attributes = {};
  SF_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  if (attributes.ptxVersion < 90) {
    *clusters = 0;
    return Status();
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(1, cluster_size, 1);
  config.blockDim = dim3(kWarpCount * 32);
  config.dynamicSmemBytes = shared;
  cudaLaunchAttribute attribute;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = 1;
  attribute.val.clusterDim.y = cluster_size;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  SF_CUDA_CHECK(cudaOccupancyMaxActiveClusters(clusters, kernel, &config));
  return Status();
}

template <typename T, int kBits, int kTiles, bool kWarpSplit, bool kZero, int kStageCount,
          bool kStreamK, int kWarpCount, bool kMoe = false>
Status occupancy_tiles(int shared, int* ctas_per_sm) {
  SF_RETURN_IF_ERROR(
      (prepare<T, kBits, kTiles, kWarpSplit, kZero, kStageCount, kStreamK, kWarpCount, kMoe>(
          shared)));
  SF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      ctas_per_sm,
      kernel_for<T, kBits, kTiles, kWarpSplit, kZero, kStageCount, kStreamK, kWarpCount, kMoe>(),
      threads_for<kWarpSplit, kWarpCount>(), shared));
  return Status();
}

// Calls f(tiles, warp_split, zero_points, stages, stream_k, warps) with integral constants for the
// instance that serves (token_tiles, warp_split, zero_points, warp_stages, stream_k, warps): the
// warp-split kernel at 1-2 token tiles may have deep-pipeline instances (warp_stages ==
// warp_split_deep_stages(token_tiles) or warp_split_lighter_deep_stages(bits, token_tiles),
// warp_split_instances.h) and, int4, a Stream-K one; at one token tile and kStages stages, a wide
// one of kWarpSplitWideWarps warps (warp_split_instances.h, warp_split_has_wide); the strip kernel
// has one instance for both zero-point kinds.
template <int kBits, typename F>
Status dispatch(int token_tiles, bool warp_split, bool zero_points, int warp_stages, bool stream_k,
                int warps, F&& f) {
  using std::false_type;
  using std::true_type;
  using Shallow = std::integral_constant<int, kStages>;
  using Four = std::integral_constant<int, kWarpSplitWarps>;
  using Wide = std::integral_constant<int, kWarpSplitWideWarps>;
  if (warps != kWarpSplitWarps &&
      !(warp_split && warps == kWarpSplitWideWarps &&
        warp_split_has_wide(token_tiles, warp_stages, stream_k))) {
    return internal_error("decode: no kernel instance of ", warps, " warps for ", token_tiles,
                          " token tiles, ", warp_stages, " stages a warp",
                          stream_k ? " and Stream-K" : "", " (", kBits, "-bit codes)");
  }
  auto shallow_or_deep = [&](auto tiles, auto zero, auto sk) -> Status {
    constexpr int kTiles = decltype(tiles)::value;
    if constexpr (warp_split_has_deep(kBits, kTiles)) {
      constexpr int kDeepest = warp_split_deep_stages(kTiles);
      if (warp_stages == kDeepest) {
        return f(tiles, true_type(), zero, std::integral_constant<int, kDeepest>(), sk, Four());
      }
    }
    if constexpr (warp_split_lighter_deep_stages(kBits, kTiles) > 0 && !decltype(sk)::value) {
      constexpr int kLighter = warp_split_lighter_deep_stages(kBits, kTiles);
      if (warp_stages == kLighter) {
        return f(tiles, true_type(), zero, std::integral_constant<int, kLighter>(), sk, Four());
      }
    }
    if constexpr (warp_split_has_wide(kTiles, kStages, decltype(sk)::value)) {
      if (warps == kWarpSplitWideWarps) return f(tiles, true_type(), zero, Shallow(), sk, Wide());
    }
    return f(tiles, true_type(), zero, Shallow(), sk, Four());
  };
  auto small_tiles = [&](auto tiles, auto zero) -> Status {
    if constexpr (has_stream_k(kBits, decltype(tiles)::value)) {
      if (stream_k) return shallow_or_deep(tiles, zero, true_type());
    }
    if (stream_k) {
      return internal_error("decode: no Stream-K instance for ", kBits, "-bit codes at ",
                            decltype(tiles)::value, " token tiles");
    }
    return shallow_or_deep(tiles, zero, false_type());
  };
  auto warp_split_tiles = [&](auto zero) -> Status {
    if (stream_k && token_tiles > 2) {
      return internal_error("decode: no Stream-K instance for ", token_tiles, " token tiles");
    }
    switch (token_tiles) {
      case 1: return small_tiles(std::integral_constant<int, 1>(), zero);
      case 2: return small_tiles(std::integral_constant<int, 2>(), zero);
      case 3:
        return f(std::integral_constant<int, 3>(), true_type(), zero, Shallow(), false_type(),
                 Four());
      case 4:
        return f(std::integral_constant<int, 4>(), true_type(), zero, Shallow(), false_type(),
                 Four());
    }
    return internal_error("decode: no warp-split kernel instance for ", token_tiles,
                          " token tiles");
  };
  if (warp_split) {
    return zero_points ? warp_split_tiles(true_type()) : warp_split_tiles(false_type());
  }
  if (stream_k) return internal_error("decode: Stream-K needs the warp-split kernel");
  const false_type no;
  const Four four;  // the strip kernel ignores it
  switch (token_tiles) {
    case 1: return f(std::integral_constant<int, 1>(), no, no, Shallow(), no, four);
    case 2: return f(std::integral_constant<int, 2>(), no, no, Shallow(), no, four);
    case 3: return f(std::integral_constant<int, 3>(), no, no, Shallow(), no, four);
    case 4: return f(std::integral_constant<int, 4>(), no, no, Shallow(), no, four);
    case 6: return f(std::integral_constant<int, 6>(), no, no, Shallow(), no, four);
    case 8: return f(std::integral_constant<int, 8>(), no, no, Shallow(), no, four);
  }
  return internal_error("decode: no kernel instance for ", token_tiles, " token tiles");
}

// Calls f(tiles, zero_points) with integral constants for the MoE instance that serves
// (token_tiles, zero_points): the warp-split kernel with kMoe at 1, 2 or 4 token tiles (blocks of
// 8, 16 or 32 rows: include/sailfish/moe.h, kMoeBlockRowChoices), kStages stages a warp at 1-2
// tiles (3 or 4 at run time at 4), four warps, the split grid.
template <typename F>
Status dispatch_moe(int token_tiles, bool zero_points, F&& f) {
  auto with_zero = [&](auto tiles) -> Status {
    return zero_points ? f(tiles, std::true_type()) : f(tiles, std::false_type());
  };
  switch (token_tiles) {
    case 1: return with_zero(std::integral_constant<int, 1>());
    case 2: return with_zero(std::integral_constant<int, 2>());
    case 4: return with_zero(std::integral_constant<int, 4>());
  }
  return internal_error("decode: no MoE kernel instance for ", token_tiles,
                        " token tiles (blocks of 8, 16 or 32 rows)");
}

}  // namespace detail

template <typename T, int kBits>
Status launch_main_kernel(const DecodeParams& params, int token_tiles, bool warp_split, int warps,
                          dim3 grid, int shared_bytes, bool pdl, cudaStream_t stream) {
  return detail::dispatch<kBits>(
      token_tiles, warp_split, params.zero_fold != nullptr, params.warp_stages,
      params.stream_k_strips > 0, warps,
      [&](auto tiles, auto split, auto zero, auto stages, auto sk, auto w) {
        return detail::launch_tiles<T, kBits, decltype(tiles)::value, decltype(split)::value,
                                    decltype(zero)::value, decltype(stages)::value,
                                    decltype(sk)::value, decltype(w)::value>(params, grid,
                                                                             shared_bytes, pdl,
                                                                             stream);
      });
}

template <typename T, int kBits>
Status warp_split_max_clusters(int token_tiles, bool zero_points, int warp_stages, bool stream_k,
                               int warps, int shared_bytes, int cluster_size, int* clusters) {
  return detail::dispatch<kBits>(
      token_tiles, true, zero_points, warp_stages, stream_k, warps,
      [&](auto tiles, auto split, auto zero, auto stages, auto sk, auto w) -> Status {
        if constexpr (decltype(split)::value) {
          return detail::max_clusters_tiles<T, kBits, decltype(tiles)::value,
                                            decltype(zero)::value, decltype(stages)::value,
                                            decltype(sk)::value, decltype(w)::value>(
              shared_bytes, cluster_size, clusters);
        } else {
          return internal_error("decode: clusters are for the warp-split kernel only");
        }
      });
}

template <typename T, int kBits>
Status main_kernel_occupancy(int token_tiles, bool warp_split, bool zero_points, int warp_stages,
                             bool stream_k, int warps, int shared_bytes, int* ctas_per_sm) {
  return detail::dispatch<kBits>(
      token_tiles, warp_split, zero_points, warp_stages, stream_k, warps,
      [&](auto tiles, auto split, auto zero, auto stages, auto sk, auto w) {
        return detail::occupancy_tiles<T, kBits, decltype(tiles)::value, decltype(split)::value,
                                       decltype(zero)::value, decltype(stages)::value,
                                       decltype(sk)::value, decltype(w)::value>(shared_bytes,
                                                                                ctas_per_sm);
      });
}

template <typename T, int kBits>
Status launch_moe_kernel(const DecodeParams& params, int token_tiles, dim3 grid, int shared_bytes,
                         bool pdl, cudaStream_t stream) {
  if (params.moe_block_experts == nullptr || params.stream_k_strips != 0) {
    return internal_error("decode: a MoE launch needs the block experts and the split grid");
  }
  return detail::dispatch_moe(token_tiles, params.zero_fold != nullptr, [&](auto tiles, auto zero) {
    return detail::launch_tiles<T, kBits, decltype(tiles)::value, true, decltype(zero)::value,
                                kStages, false, kWarpSplitWarps, true>(params, grid, shared_bytes,
                                                                       pdl, stream);
  });
}

template <typename T, int kBits>
Status moe_kernel_occupancy(int token_tiles, bool zero_points, int shared_bytes, int* ctas_per_sm) {
  return detail::dispatch_moe(token_tiles, zero_points, [&](auto tiles, auto zero) {
    return detail::occupancy_tiles<T, kBits, decltype(tiles)::value, true, decltype(zero)::value,
                                   kStages, false, kWarpSplitWarps, true>(shared_bytes,
                                                                         ctas_per_sm);
  });
}

template <typename T, int kBits>
Status moe_max_clusters(int token_tiles, bool zero_points, int shared_bytes, int cluster_size,
                        int* clusters) {
  return detail::dispatch_moe(token_tiles, zero_points, [&](auto tiles, auto zero) {
    return detail::max_clusters_tiles<T, kBits, decltype(tiles)::value, decltype(zero)::value,
                                      kStages, false, kWarpSplitWarps, true>(
        shared_bytes, cluster_size, clusters);
  });
}

}  // namespace sailfish::decode
