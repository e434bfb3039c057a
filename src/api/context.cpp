// Context: the per-device state run() needs but must not create (a cuBLASLt handle).
#include "common/cuda_check.h"
#include "sailfish/sailfish.h"

namespace sailfish {

Status Context::create(int device, std::unique_ptr<Context>* out) {
  if (out == nullptr) return invalid_argument("Context::create: out is null");
  int previous = 0;
  SF_CUDA_CHECK(cudaGetDevice(&previous));
  if (device < 0) device = previous;
  std::unique_ptr<Context> context(new Context());
  context->device_ = device;
  SF_CUDA_CHECK(cudaSetDevice(device));
  cublasLtHandle_t handle = nullptr;
  const cublasStatus_t created = cublasLtCreate(&handle);
  SF_CUDA_CHECK(cudaSetDevice(previous));
  SF_CUBLAS_CHECK(created);
  context->cublaslt_ = handle;
  *out = std::move(context);
  return Status();
}

Context::~Context() {
  if (cublaslt_ != nullptr) cublasLtDestroy(static_cast<cublasLtHandle_t>(cublaslt_));
}

}  // namespace sailfish
