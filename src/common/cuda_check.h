// Turning CUDA and cuBLAS return codes into Status, at every call.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "sailfish/status.h"

namespace sailfish::detail {

inline Status cuda_status(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status();
  return Status(StatusCode::kCudaError,
                concat(what, ": ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")"));
}

inline Status cublas_status(cublasStatus_t err, const char* what) {
  if (err == CUBLAS_STATUS_SUCCESS) return Status();
  return Status(StatusCode::kCublasError,
                concat(what, ": cuBLAS status ", static_cast<int>(err), " (",
                       cublasLtGetStatusName(err), ")"));
}

}  // namespace sailfish::detail

#define SF_CUDA_CHECK(call) SF_RETURN_IF_ERROR(::sailfish::detail::cuda_status((call), #call))
#define SF_CUBLAS_CHECK(call) SF_RETURN_IF_ERROR(::sailfish::detail::cublas_status((call), #call))
// After a kernel launch: a bad configuration is reported at once, not at the next sync.
#define SF_CHECK_LAUNCH(what) \
  SF_RETURN_IF_ERROR(::sailfish::detail::cuda_status(cudaGetLastError(), what))
