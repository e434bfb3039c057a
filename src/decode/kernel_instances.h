// The decode kernel instances: one translation unit per (activation type, bit width), each
// holding the strip kernel for the six token-tile counts and the warp-split kernel for 1-4
// (decode_<type>_int<bits>.cu). Declared here, defined by kernel_instances.cuh.
#pragma once

#include <cuda_runtime_api.h>

#include "decode/decode_kernel.cuh"
#include "decode/warp_split_kernel.cuh"
#include "sailfish/status.h"

namespace sailfish::decode {

template <typename T, int kBits>
Status launch_main_kernel(const DecodeParams& params, int token_tiles, bool warp_split, dim3 grid,
                          bool pdl, cudaStream_t stream);

// CTAs of the kernel that fit on one SM.
template <typename T, int kBits>
Status main_kernel_occupancy(int token_tiles, bool warp_split, int* ctas_per_sm);

}  // namespace sailfish::decode
