// The MoE bench's cuBLAS baseline (sailfish_moe_bench --cublas): the same expert GEMMs as a model
// without quantization runs them, bf16 weights and activations, fp32 accumulation, in one
// cublasGemmGroupedBatchedEx call with one group a touched expert (its routed rows contiguous, so
// the baseline pays no gather and no combine). Untouched experts' weights are not allocated: the
// call never reads them. Weights come in `copies` sets, rotated by the caller as the quantized
// experts are, so both read cold weights.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "device_buffer.h"
#include "sailfish/status.h"
#include "spot_check.h"

namespace sailfish::bench {

class CublasExperts {
 public:
  ~CublasExperts();
  CublasExperts(const CublasExperts&) = delete;
  CublasExperts& operator=(const CublasExperts&) = delete;

  // rows[e]: the rows routed to expert e (0: untouched). Each touched expert e computes
  // y_e[rows[e]][n] = a_e[rows[e]][k] . w_e[n][k]^T. Allocates and fills the weights, the
  // activations and the outputs (random bf16), and the device pointer arrays of every copy.
  static Status create(const std::vector<int>& rows, int64_t n, int64_t k, int copies,
                       uint64_t seed, cudaStream_t stream, std::unique_ptr<CublasExperts>* out);

  // Enqueues the grouped GEMM on weight set `copy` (CUDA-graph safe: no allocation, no sync).
  Status enqueue(int copy, cudaStream_t stream);

  // Runs the grouped GEMM once on weight set `copy` into outputs poisoned with NaN first, and
  // checks `samples` elements of each group against float64 sums over the same bf16 weights and
  // activations (spot_check.h, check_dense), and every output element for NaN/Inf: the layout the
  // timing assumes (row-major y_e = a_e . w_e^T) is the one cuBLAS computes. Synchronizes.
  Status check(int copy, int samples, uint64_t seed, cudaStream_t stream, CheckResult* result);

  int groups() const { return static_cast<int>(m_.size()); }

 private:
  CublasExperts() = default;

  cublasHandle_t handle_ = nullptr;
  DeviceBuffer workspace_, weights_, activations_, outputs_, pointers_;
  int copies_ = 0;
  int64_t total_rows_ = 0;
  std::vector<int64_t> first_row_;  // per group: its first row of the activations and outputs
  // Per group (column-major, as cuBLAS sees the row-major product: y_e^T = w_e . a_e^T).
  std::vector<cublasOperation_t> trans_a_, trans_b_;
  std::vector<int> m_, n_, k_, lda_, ldb_, ldc_, group_size_;
  std::vector<float> alpha_, beta_;
};

}  // namespace sailfish::bench
