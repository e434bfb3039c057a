// The MoE bench's correctness check, run once before a row is timed (as sailfish_bench's,
// docs/BENCH.md "Correctness"): the plan on one weight copy into an output poisoned with NaN, every
// output element scanned (an unwritten or non-finite one fails the row), then sampled elements
// against float64 sums over the host copy of the very expert bytes the kernels read
// (spot_check.h's tolerance). A choice row of a gate_up GEMM is its token's activations times its
// expert's weight; a token row of a down GEMM sums its choices' products, each scaled by its router
// weight.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "sailfish/moe.h"
#include "sailfish/moe_gpu.h"
#include "spot_check.h"

namespace sailfish::bench {

// run: the arguments the plan is timed with, experts pointing at the copy to check; routing: the
// host copy of what run.routing points at (every expert local: a map is refused). Experts are
// fetched one at a time, so host memory stays at one expert whatever the routing touches.
Status check_moe(const MoePlan& plan, const MoeRunArgs& run, const MoeRouting& routing,
                 void* workspace, size_t workspace_bytes, int samples, uint64_t seed,
                 cudaStream_t stream, CheckResult* result);

}  // namespace sailfish::bench
