// The decode kernel instances: one translation unit per (activation type, bit width), each
// holding the strip kernel for the six token-tile counts and the warp-split kernel for 1-4 (with a
// deep-pipeline instance at 1-2 token tiles, int8 at 1: warp_split_instances.h,
// warp_split_has_deep, and an eight-warp one at one token tile: warp_split_has_wide), once for
// symmetric weights and once with zero points (decode_<type>_int<bits>.cu), and the warp-split
// kernel's MoE instances at 1, 2 and 4 token tiles (launch_moe_kernel). Declared here, defined
// by kernel_instances.cuh.
#pragma once

#include <cuda_runtime_api.h>

#include "decode/decode_kernel.cuh"
#include "decode/warp_split_kernel.cuh"
#include "sailfish/status.h"

namespace sailfish::decode {

// shared_bytes: the CTA's dynamic shared memory (plan_decode), at most the instance's maximum.
// warps: the warp-split kernel's warps a CTA (tile_shapes.h: kWarpSplitWarps, or
// kWarpSplitWideWarps where warp_split_has_wide); the strip kernel takes kWarpSplitWarps and
// ignores it.
template <typename T, int kBits>
Status launch_main_kernel(const DecodeParams& params, int token_tiles, bool warp_split, int warps,
                          dim3 grid, int shared_bytes, bool pdl, cudaStream_t stream);

// CTAs of the kernel that fit on one SM with shared_bytes of dynamic shared memory each;
// zero_points, warp_stages, stream_k and warps pick the warp-split kernel's instance
// (launch_main_kernel takes the first three from params; Stream-K where
// params.stream_k_strips > 0).
template <typename T, int kBits>
Status main_kernel_occupancy(int token_tiles, bool warp_split, bool zero_points, int warp_stages,
                             bool stream_k, int warps, int shared_bytes, int* ctas_per_sm);

// Clusters of cluster_size CTAs of the warp-split kernel (Epilogue::kCluster, or a Stream-K
// cluster) that can be resident at once on the current device; 0 when such a cluster cannot be
// scheduled.
template <typename T, int kBits>
Status warp_split_max_clusters(int token_tiles, bool zero_points, int warp_stages, bool stream_k,
                               int warps, int shared_bytes, int cluster_size, int* clusters);

// The MoE instances (docs/MOE.md; DecodeParams::moe_block_experts): the warp-split kernel on the
// split grid at 1, 2 or 4 token tiles, kStages stages a warp (3 or 4 at 4 tiles:
// params.warp_stages), four warps. pdl: programmatic dependent launch; the kernel waits for the
// previous grid before it reads anything (the align step's block experts pick its weight).
template <typename T, int kBits>
Status launch_moe_kernel(const DecodeParams& params, int token_tiles, dim3 grid, int shared_bytes,
                         bool pdl, cudaStream_t stream);
template <typename T, int kBits>
Status moe_kernel_occupancy(int token_tiles, bool zero_points, int shared_bytes, int* ctas_per_sm);
template <typename T, int kBits>
Status moe_max_clusters(int token_tiles, bool zero_points, int shared_bytes, int cluster_size,
                        int* clusters);

}  // namespace sailfish::decode
