// The baseline every row is compared with: cuBLASLt dense GEMM in the activation dtype on an
// unquantized [N][K] weight, fp32 accumulation, y = x W^T (the "TN" layout torch.mm uses for a
// linear layer). One algorithm is picked per (M, N, K) by cuBLASLt's heuristic, like torch does.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "device_buffer.h"
#include "sailfish/types.h"

namespace sailfish::bench {

class CublasDense {
 public:
  ~CublasDense();
  CublasDense(const CublasDense&) = delete;
  CublasDense& operator=(const CublasDense&) = delete;

  // A handle and a 32 MiB workspace (what cuBLAS itself recommends on Hopper).
  static Status create(DType dtype, std::unique_ptr<CublasDense>* out);

  // Descriptors and the algorithm for y[m][n] = a[m][k] . w[n][k]^T (+ bias[n] when bias is not
  // null; the bias pointer is baked into the descriptor). kUnsupported when no algorithm fits.
  Status prepare(int64_t m, int64_t n, int64_t k, const void* bias);
  // Enqueues one GEMM; capture-safe (no allocation, no sync).
  Status enqueue(const void* a, const void* w, void* y, cudaStream_t stream) const;

 private:
  CublasDense() = default;
  void release_descriptors();

  DType dtype_ = DType::kBF16;
  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t w_layout_ = nullptr, a_layout_ = nullptr, y_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool prepared_ = false;
};

}  // namespace sailfish::bench
