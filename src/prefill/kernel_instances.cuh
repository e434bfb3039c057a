// Definitions behind kernel_instances.h; included only by the per-type translation units.
#pragma once

#include <type_traits>

#include "common/cuda_check.h"
#include "common/launch.cuh"
#include "common/shared_memory_limit.h"
#include "prefill/kernel_instances.h"

namespace sailfish::prefill {

namespace detail {

template <typename F>
Status dispatch_tokens(int tokens, F&& f) {
  switch (tokens) {
    case 16: return f(std::integral_constant<int, 16>());
    case 32: return f(std::integral_constant<int, 32>());
    case 64: return f(std::integral_constant<int, 64>());
    case 128: return f(std::integral_constant<int, 128>());
    case 256: return f(std::integral_constant<int, 256>());
  }
  return internal_error("prefill: no kernel instance for ", tokens, " tokens per tile");
}

}  // namespace detail

template <typename T, int kBits>
Status launch_main_kernel(const CUtensorMap& act_map, const PrefillParams& params, int tokens,
                          int grid, bool pdl, cudaStream_t stream) {
  return detail::dispatch_tokens(tokens, [&](auto width) {
    constexpr int kTokens = decltype(width)::value;
    auto run = [&](auto zero) {
      constexpr bool kZero = decltype(zero)::value;
      constexpr int kMaxShared =
          shared_bytes(kBits, kTokens, max_stages(kBits, kTokens, kZero), kZero);
      const int shared = shared_bytes(kBits, kTokens, params.stages, kZero);
      if (params.stages < kMinStages || shared > kMaxShared) {
        return internal_error("prefill kernel: ", params.stages, " stages of ", kTokens,
                              " tokens asked; the instance allows ", kMinStages, "..",
                              max_stages(kBits, kTokens, kZero));
      }
      const bool clustered = params.epilogue == PrefillEpilogue::kCluster;
      auto start = [&](auto* kernel, unsigned cluster) -> Status {
        // Raised to the deepest pipeline the instance allows, once per device.
        SF_RETURN_IF_ERROR(
            gpu::raise_shared_memory_limit(reinterpret_cast<const void*>(kernel), kMaxShared));
        return gpu::launch_in_clusters(kernel, dim3(grid), dim3(cluster, 1, 1),
                                       dim3(cta_threads(kTokens)), shared, stream, pdl,
                                       "prefill kernel launch", act_map, params);
      };
      if (!clustered) return start(prefill_kernel<T, kBits, kTokens, kZero>, 1u);
      // The clustered split grid runs each tile's splits as one cluster (cluster_reduce.h).
      if constexpr (kTokens <= kMaxClusterTokens) {
        if (params.splits < 2 || params.splits > kMaxClusterSplits || grid % params.splits != 0) {
          return internal_error("prefill kernel: a clustered grid of ", grid, " CTAs for ",
                                params.splits, " splits");
        }
        return start(prefill_cluster_kernel<T, kBits, kTokens, kZero>,
                     static_cast<unsigned>(params.splits));
      } else {
        return internal_error("prefill kernel: no clustered instance at ", kTokens, " tokens");
      }
    };
    return params.zero_fold != nullptr ? run(std::true_type()) : run(std::false_type());
  });
}

template <typename T, int kBits>
Status main_kernel_max_clusters(int tokens, bool zero_points, int shared, int cluster_size,
                                int* clusters) {
  return detail::dispatch_tokens(tokens, [&](auto width) {
    constexpr int kTokens = decltype(width)::value;
    auto query = [&](auto zero) -> Status {
      constexpr bool kZero = decltype(zero)::value;
      if constexpr (kTokens > kMaxClusterTokens) {
        return internal_error("prefill: no clustered instance at ", kTokens, " tokens");
      } else {
        auto* kernel = prefill_cluster_kernel<T, kBits, kTokens, kZero>;
        SF_RETURN_IF_ERROR(gpu::raise_shared_memory_limit(
            reinterpret_cast<const void*>(kernel),
            shared_bytes(kBits, kTokens, max_stages(kBits, kTokens, kZero), kZero)));
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(cluster_size);
        config.blockDim = dim3(cta_threads(kTokens));
        config.dynamicSmemBytes = shared;
        cudaLaunchAttribute attribute;
        attribute.id = cudaLaunchAttributeClusterDimension;
        attribute.val.clusterDim.x = cluster_size;
        attribute.val.clusterDim.y = 1;
        attribute.val.clusterDim.z = 1;
        config.attrs = &attribute;
        config.numAttrs = 1;
        SF_CUDA_CHECK(cudaOccupancyMaxActiveClusters(clusters, kernel, &config));
        return Status();
      }
    };
    return zero_points ? query(std::true_type()) : query(std::false_type());
  });
}

template <typename T, int kBits>
Status main_kernel_binary_version(int* version) {
  cudaFuncAttributes attributes = {};
  SF_CUDA_CHECK(cudaFuncGetAttributes(&attributes, prefill_kernel<T, kBits, 128, false>));
  *version = attributes.binaryVersion;
  return Status();
}

}  // namespace sailfish::prefill
