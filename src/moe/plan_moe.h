// plan_moe's rules on the decode tier's device queries (decode/launch.h, DeviceQueries), so the
// CPU tests plan MoE layers on the H200 model (tests/model) as they do decode plans.
#pragma once

#include "decode/launch.h"
#include "sailfish/moe_gpu.h"

namespace sailfish::moe {

// The decode problem of the layer's expert GEMM: `rows` gathered rows (align.max_blocks *
// block_rows) against one expert's geometry and format, no bias (the combine step adds it).
Problem gemm_problem(const MoeProblem& problem, int64_t rows);

// Fills *out for `problem` with q's answers about the MoE kernel instances (DecodePlan::moe);
// q must answer for gemm_problem(problem, rows) of this plan's rows. sm_count: the device's SMs.
Status plan_moe(const MoeProblem& problem, const decode::DeviceQueries& q, int device, int sm_count,
                const MoeOptions& options, MoePlan* out);

// Checks a MoeProblem: sizes, format, dtypes (what plan_moe refuses, and why).
Status validate(const MoeProblem& problem);

// options with each unset field taken from its SAILFISH_* variable (docs/CONFIG.md), read at each
// call: SAILFISH_MOE_BLOCK_ROWS (8, 16 or 32), SAILFISH_MOE_SPLITS (1 to 8). A malformed value is
// an error naming the variable.
Status resolve_options(const MoeOptions& options, MoeOptions* out);

}  // namespace sailfish::moe
