// Split-K reduce of the prefill tier: Y[m][n] = sum over splits, in split order, of the fp32
// partials [split][m_pad][n_pad] + bias; one rounding to 16 bits, the same bits every run.
// Token-major like Y, so consecutive threads read consecutive columns.
#pragma once

#include <cstdint>

#include "common/ptx/griddepcontrol.cuh"

namespace sailfish::prefill {

struct ReduceParams {
  const float* partials;  // [splits][m_pad][n_pad]
  int32_t splits, m_pad, n_pad, m, n;
  const void* bias;       // [n] or null
  void* y;                // [m][n]
};

template <typename T>
__global__ void reduce_kernel(const ReduceParams p) {
  const int64_t total = int64_t(p.m) * p.n;
  const int64_t split_stride = int64_t(p.m_pad) * p.n_pad;
  const T* bias = static_cast<const T*>(p.bias);
  gpu::wait_for_previous_grid();
  gpu::allow_next_grid();
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t token = i / p.n;
    const int col = static_cast<int>(i % p.n);
    const float* partial = p.partials + token * p.n_pad + col;
    float sum = 0.0f;
    for (int s = 0; s < p.splits; ++s) sum += partial[s * split_stride];
    if (bias != nullptr) sum += static_cast<float>(bias[col]);
    static_cast<T*>(p.y)[i] = static_cast<T>(sum);
  }
}

}  // namespace sailfish::prefill
