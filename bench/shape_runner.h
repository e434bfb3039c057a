// Measures every (M, tier) row of one shape: allocates its weights and buffers once (sized for the
// largest M), then per M in ascending order: each requested Sailfish tier (checked, then timed),
// cuBLAS, and the floor kernel, side by side. Frees everything before returning.
#pragma once

#include <vector>

#include "bench_context.h"
#include "results.h"
#include "shapes.h"

namespace sailfish::bench {

// Appends the shape's rows. A row-level failure is recorded in its row and the run goes on; the
// returned Status is non-ok only when the CUDA context is no longer usable (the run must stop).
Status run_shape(BenchContext& ctx, const Shape& shape, std::vector<RowResult>* rows);

}  // namespace sailfish::bench
