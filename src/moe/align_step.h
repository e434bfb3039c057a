// The align step's launch as run_moe uses it: moe_align_on_device (include/sailfish/moe_gpu.h)
// plus the fused combine's duty of zeroing Y's rows that no block holds.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "sailfish/moe_gpu.h"

namespace sailfish::moe {

// moe_align_on_device with, when zero_y_rows is non-null, Y's row (y_row_bytes bytes, a multiple
// of 2) of every choice that no block holds zeroed: an invalid id or a map entry of -1.
Status launch_align_step(const DeviceMoeRouting& routing, const MoeAlignLayout& layout,
                         void* buffer, size_t buffer_bytes, cudaStream_t stream,
                         bool programmatic_dependent_launch, void* zero_y_rows,
                         int64_t y_row_bytes);

}  // namespace sailfish::moe
