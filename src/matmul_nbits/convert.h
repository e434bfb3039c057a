// fp32 <-> 16-bit conversions around the 16-bit product, for MatMulNBits with fp32 activations.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "sailfish/status.h"
#include "sailfish/types.h"

namespace sailfish::matmul_nbits {

// dst[i] = src[i] rounded to nearest even in dtype (kF16 or kBF16), for i < count. Values past
// the fp16 range become +-inf in fp16; NaN stays NaN. src 4-byte aligned, dst 2-byte aligned.
Status launch_f32_to_16(const float* src, void* dst, int64_t count, DType dtype, int sm_count,
                        cudaStream_t stream);

// y[r][c] = float(src[r][c]) + (bias ? bias[c] : 0) for rows x cols row-major elements; src of
// dtype (kF16 or kBF16). Exact apart from the one fp32 addition of the bias.
Status launch_16_to_f32_bias(const void* src, DType dtype, const float* bias, float* y,
                             int64_t rows, int64_t cols, int sm_count, cudaStream_t stream);

}  // namespace sailfish::matmul_nbits
