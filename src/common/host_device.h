// Marks functions that both host code (plans, CPU tests) and kernels call, and the split-K range
// and scale-row arithmetic the decode and prefill tiers share.
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

// Scale rows one 64-column k-block spans, given the group shift (log2 of the group's columns, 30
// for channelwise): 4 for groups of 16, 2 for 32, 1 for 64 and up.
SF_HOST_DEVICE constexpr int meta_rows_for(int group_shift) {
  return group_shift >= 6 ? 1 : (64 >> group_shift);
}

// Which of those rows k16 slice `slice` (0-3) of the block uses.
SF_HOST_DEVICE constexpr int slice_scale_row(int group_shift, int slice) {
  return group_shift >= 6 ? 0 : (16 * slice) >> group_shift;
}

}  // namespace sailfish::detail
