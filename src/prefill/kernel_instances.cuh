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
      auto* kernel = prefill_kernel<T, kBits, kTokens, kZero>;
      // Raised to the deepest pipeline the instance allows, once per device.
      SF_RETURN_IF_ERROR(
          gpu::raise_shared_memory_limit(reinterpret_cast<const void*>(kernel), kMaxShared));
      return gpu::launch(kernel, dim3(grid), dim3(cta_threads(kTokens)), shared, stream, pdl,
                         "prefill kernel launch", act_map, params);
    };
    return params.zero_fold != nullptr ? run(std::true_type()) : run(std::false_type());
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
