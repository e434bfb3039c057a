// Decode tier host side: the plan-time configuration and the launcher.
#pragma once

#include <cuda_runtime_api.h>

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

// Fills plan->decode and plan->workspace_bytes for the decode tier (plan->problem, device and
// sm_count must be set). Host only; queries the kernel's occupancy.
Status plan_decode(const DecodeChoices& choices, Plan* plan);

// Enqueues prep (if needed), the main kernel and the deterministic reduce (if needed).
Status run_decode(const Plan& plan, const RunArgs& args, void* workspace, cudaStream_t stream);

}  // namespace sailfish::decode
