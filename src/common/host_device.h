// Marks functions that both host code (plans, CPU tests) and kernels call, and the split-K range
// arithmetic the decode and prefill tiers share.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define SF_HOST_DEVICE __host__ __device__
#else
#define SF_HOST_DEVICE
#endif

namespace sailfish::detail {

// The k-block range [begin, end) of split s of `splits` over k_blocks blocks: sizes differ by at
// most one and the ranges tile [0, k_blocks) exactly.
SF_HOST_DEVICE constexpr int64_t split_begin(int64_t k_blocks, int splits, int s) {
  return k_blocks * s / splits;
}

}  // namespace sailfish::detail
