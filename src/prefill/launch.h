// Prefill tier host side: the plan-time configuration and the launcher.
#pragma once

#include <cuda_runtime_api.h>

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
Status plan_prefill(std::optional<int64_t> forced_tokens, std::optional<int64_t> forced_splits,
                    std::optional<int64_t> forced_stages, std::optional<bool> forced_stream_k,
                    Plan* plan);

// Enqueues prep (act-order or unaligned K), the main kernel and the ordered reduce (splits > 1)
// or the Stream-K fixup.
Status run_prefill(const Plan& plan, const RunArgs& args, void* workspace, cudaStream_t stream);

}  // namespace sailfish::prefill
