#include "common/shared_memory_limit.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <utility>

#include "common/cuda_check.h"

namespace sailfish::gpu {

Status raise_shared_memory_limit(const void* kernel, int bytes) {
  int device = 0;
  SF_CUDA_CHECK(cudaGetDevice(&device));
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, int> raised;  // (kernel, device) -> bytes
  std::lock_guard<std::mutex> lock(mutex);
  int& limit = raised[{kernel, device}];
  if (limit >= bytes) return Status();
  SF_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  limit = bytes;
  return Status();
}

}  // namespace sailfish::gpu
