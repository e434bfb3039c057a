// The prefill kernel instances: one translation unit per (activation type, bit width), each
// holding the kernels of every token width (config.h: kMinTokens .. kMaxTokens), with and without
// zero points (prefill_<type>_int<bits>.cu). Declared here, defined by
// kernel_instances.cuh.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "prefill/prefill_kernel.cuh"
#include "sailfish/status.h"

namespace sailfish::prefill {

template <typename T, int kBits>
Status launch_main_kernel(const CUtensorMap& act_map, const PrefillParams& params, int tokens,
                          int grid, bool pdl, cudaStream_t stream);

// The SASS version (e.g. 90) of the kernel this process would run on the current device; a build
// without sm_90a has no wgmma kernel to run.
template <typename T, int kBits>
Status main_kernel_binary_version(int* version);

}  // namespace sailfish::prefill
