// Decode tier host side: the plan-time configuration and the launcher.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>

#include "sailfish/sailfish.h"

namespace sailfish::decode {

// Fills plan->decode and plan->workspace_bytes for the decode tier (plan->problem, device and
// sm_count must be set). Host only; queries the kernel's occupancy.
// forced_splits: a split-K depth to use instead of the heuristic (clamped to the k-blocks).
// warp_split: use the warp-split kernel where it applies (M <= 32 per CTA).
// forced_stages: the warp-split kernel's stages per warp instead of the heuristic: 3 or 4 at
// 17-32 tokens per CTA, 4 or 6 below where the deep instance exists (config.h,
// warp_split_has_deep); a count the kernel for this M lacks is ignored.
// cluster_reduce: let the split CTAs of a strip reduce through a cluster (Epilogue::kCluster)
// where it applies (warp-split kernel, sm_90, 2 to 8 splits, not the red.global epilogue).
Status plan_decode(std::optional<int64_t> forced_splits, std::optional<int64_t> forced_stages,
                   bool warp_split, bool cluster_reduce, Plan* plan);

// Enqueues prep (if needed), the main kernel and the deterministic reduce (if needed).
Status run_decode(const Plan& plan, const RunArgs& args, void* workspace, cudaStream_t stream);

}  // namespace sailfish::decode
