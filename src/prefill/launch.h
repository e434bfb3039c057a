// Prefill tier host side: the plan-time configuration and the launcher.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>

#include "sailfish/sailfish.h"

namespace sailfish::prefill {

// Whether this build and device can run the prefill tier: an sm_90 device and kernels compiled
// for sm_90a (wgmma, setmaxnreg). On failure the status says which is missing.
Status prefill_available(int device);

// Fills plan->prefill and plan->workspace_bytes (plan->problem, device and sm_count must be set).
// Host only. forced_tokens / forced_splits / forced_stages / forced_stream_k replace the
// heuristics (the width must be a power of two in config.h's kMinTokens .. kMaxTokens; splits are
// clamped to the k-blocks; a depth that does not fit in shared memory is an error; a forced split
// depth with Stream-K forced on is an error).
//
// The split grid sums through clusters (cluster_reduce.h) where forced_cluster_reduce is true and
// the plan fits one (cluster_reduce_fits), or, unset, where it fits and resident_clusters says
// that every tile's cluster is resident at once; without resident_clusters (the CPU tests: no
// device) only where forced.
using ResidentClusters =
    std::function<Status(const Plan& plan, int cluster_size, int* clusters)>;
Status plan_prefill(std::optional<int64_t> forced_tokens, std::optional<int64_t> forced_splits,
                    std::optional<int64_t> forced_stages, std::optional<bool> forced_stream_k,
                    Plan* plan, std::optional<bool> forced_cluster_reduce = std::nullopt,
                    const ResidentClusters& resident_clusters = nullptr);

// The clusters query on plan->device (made current while it runs), for plan_prefill.
Status cuda_resident_clusters(const Plan& plan, int cluster_size, int* clusters);

// Enqueues prep (act-order or unaligned K), the main kernel and the ordered reduce (splits > 1)
// or the Stream-K fixup.
Status run_prefill(const Plan& plan, const RunArgs& args, void* workspace, cudaStream_t stream);

}  // namespace sailfish::prefill
