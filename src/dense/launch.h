// Dense tier host side: the dequantization launcher and the cuBLASLt product.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "sailfish/sailfish.h"

namespace sailfish::dense {

// Dequantizes packed rows [row_begin, row_begin + rows) (row_begin a multiple of 64, rows a
// multiple of 64 or up to n_pad) into scratch of the weight's scale dtype: [rows][ld] (ld >= k_pad)
// or, for act-order weights, transposed [k][ld] (ld >= rows) with input column order restored.
Status launch_dequantize(const DeviceWeight& weight, int64_t row_begin, int64_t rows,
                         void* scratch, int64_t ld, int sm_count, cudaStream_t stream);

// Y[:, col_begin : col_begin + cols] = A . W_chunk^T (+ bias[col_begin ...]) via cuBLASLt, with W_chunk
// the dequantized scratch [cols][ld] and Y row-major [m][n_total].
struct DenseGemmArgs {
  const void* a;
  int64_t m, k;
  const void* w_chunk;
  int64_t ld_w;
  bool w_transposed;  // w_chunk is [k][ld_w] (act-order scratch) instead of [cols][ld_w]
  const void* bias;  // already offset to col_begin, or null
  void* y;           // already offset to col_begin
  int64_t cols;
  int64_t ld_y;      // n_total
  DType dtype;
  void* cublas_workspace;
  size_t cublas_workspace_bytes;
};
Status cublaslt_gemm(void* cublaslt_handle, const DenseGemmArgs& args, cudaStream_t stream);

}  // namespace sailfish::dense
