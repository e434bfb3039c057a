// Decode tier host side: the plan-time configuration and the launcher.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>

#include "sailfish/sailfish.h"

namespace sailfish::decode {

// What the caller fixes of a decode plan (Options, resolved); unset fields are planned.
struct DecodeChoices {
  // A split-K depth to use instead of the heuristic (clamped to the k-blocks); with Stream-K, the
  // CTAs a cluster.
  std::optional<int64_t> splits;
  // The warp-split kernel's stages per warp instead of the heuristic: 3 or 4 at 17-32 tokens per
  // CTA, 4 or the deep counts below where the deep instances exist (warp_split_instances.h: 6 at
  // 1-8 tokens, 5 at 9-16, and int8 at 1-8 also warp_split_lighter_deep_stages, 5); a count the
  // kernel for this M lacks is ignored.
  std::optional<int64_t> warp_stages;
  // The Stream-K grid (stream_k_grid.h, stream_k_plan) wherever it fits, instead of the split grid
  // (opt-in: slower on the H200, v18); stream_k_strips: its strips per cluster.
  std::optional<bool> stream_k;
  std::optional<int64_t> stream_k_strips;
  // Use the warp-split kernel where it applies (M <= 32 per CTA).
  bool warp_split = true;
  // Let the split CTAs of a strip reduce through a cluster (Epilogue::kCluster) where it applies
  // (warp-split kernel, sm_90, 2 to 8 splits, not the red.global epilogue). Off, no Stream-K.
  bool cluster_reduce = true;
  // The cluster epilogue's push form (launch.cu, choose_cluster_push): unset, the plan decides.
  std::optional<bool> cluster_push;
  // Shared memory padded to the grid's even share of CTAs an SM (launch.cu, spread_over_sms):
  // unset, where grid_placement.h's spread_pays; true, wherever an SM would hold more; false,
  // never.
  std::optional<bool> spread;
  // The wide instance, eight warps a CTA (launch.cu, choose_wide_warps): unset, where
  // warp_split_instances.h's wide_warps_pay; true, wherever it applies (one token tile, the split
  // grid) and fits; false, never.
  std::optional<bool> wide_warps;
};

// What plan_decode asks of the GPU: three attributes, and how its kernel instances sit on an SM.
// cuda_device_queries answers with CUDA's queries on a device; the CPU tests answer with a model
// of an H200 (tests/model/decode_gpu_model.h), so the planner's choices run without a GPU.
struct DeviceQueries {
  int compute_major = 0;            // cudaDevAttrComputeCapabilityMajor
  int smem_per_sm = 0;              // cudaDevAttrMaxSharedMemoryPerMultiprocessor
  int reserved_smem_per_block = 0;  // cudaDevAttrReservedSharedMemoryPerBlock
  // CTAs of the main-kernel instance of plan d (token tiles, warp split, stages, Stream-K, warps)
  // one SM holds at d.shared_bytes of dynamic shared memory.
  std::function<Status(const DecodePlan& d, int* ctas)> ctas_per_sm;
  // Clusters of `size` CTAs (1 x size x 1) of that instance resident at once; 0 where the code
  // that runs has no cluster epilogue (built for a target before sm_90).
  std::function<Status(const DecodePlan& d, int size, int* clusters)> max_clusters;
};

// The queries on CUDA device `device` for `problem`'s kernel instances (activation type, bit
// width, zero points). They read the current device, which must be `device` when they run; the
// functions keep a reference to `problem`.
Status cuda_device_queries(const Problem& problem, int device, DeviceQueries* q);

// Fills plan->decode and plan->workspace_bytes for the decode tier (plan->problem and sm_count
// must be set), with q's answers. Host only.
Status plan_decode(const DecodeChoices& choices, const DeviceQueries& q, Plan* plan);

// The same on plan->device with CUDA's queries (the device is made current while they run).
Status plan_decode(const DecodeChoices& choices, Plan* plan);

// Enqueues prep (if needed), the main kernel and the deterministic reduce (if needed).
Status run_decode(const Plan& plan, const RunArgs& args, void* workspace, cudaStream_t stream);

}  // namespace sailfish::decode
