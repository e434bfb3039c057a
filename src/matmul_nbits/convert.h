// fp32 <-> 16-bit conversions around the 16-bit product, for MatMulNBits with fp32 activations.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "sailfish/status.h"
#include "sailfish/types.h"

namespace sailfish::matmul_nbits {

// Bytes of the fp32 path's staging in the workspace: A ([m][k]) and Y ([m][n]) in the 16-bit
// compute type, each rounded up to 256 bytes. False where m is so large that those sizes pass
// int64 (no such A can exist): the plain products wrapped, and workspace_size() and run() then
// sized, checked and converted a few bytes of the m rows they were given.
inline bool f32_staging_bytes(int64_t m, int64_t n, int64_t k, size_t* bytes) {
  int64_t a = 0, y = 0, a_bytes = 0, y_bytes = 0;
  if (m < 0 || __builtin_mul_overflow(m, k, &a) || __builtin_mul_overflow(a, 2, &a_bytes) ||
      __builtin_mul_overflow(m, n, &y) || __builtin_mul_overflow(y, 2, &y_bytes) ||
      a_bytes > INT64_MAX - 512 - y_bytes) {
    return false;
  }
  const auto align256 = [](int64_t v) { return static_cast<size_t>((v + 255) / 256 * 256); };
  *bytes = align256(a_bytes) + align256(y_bytes);
  return true;
}

// dst[i] = src[i] rounded to nearest even in dtype (kF16 or kBF16), for i < count. Values past
// the fp16 range become +-inf in fp16; NaN stays NaN. src 4-byte aligned, dst 2-byte aligned.
Status launch_f32_to_16(const float* src, void* dst, int64_t count, DType dtype, int sm_count,
                        cudaStream_t stream);

// y[r][c] = float(src[r][c]) + (bias ? bias[c] : 0) for rows x cols row-major elements; src of
// dtype (kF16 or kBF16). Exact apart from the one fp32 addition of the bias.
Status launch_16_to_f32_bias(const void* src, DType dtype, const float* bias, float* y,
                             int64_t rows, int64_t cols, int sm_count, cudaStream_t stream);

}  // namespace sailfish::matmul_nbits
