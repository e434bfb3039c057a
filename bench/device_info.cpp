#include "device_info.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "common/cuda_check.h"

namespace sailfish::bench {

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the error so that it is not reported by a later, unrelated check
    return 0;
  }
  return count;
}

Status query_device(int ordinal, DeviceInfo* out) {
  cudaDeviceProp prop{};
  SF_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sms = prop.multiProcessorCount;
  d.l2_bytes = prop.l2CacheSize;
  d.global_mem_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  d.mem_bus_bits = prop.memoryBusWidth;
  // cudaDeviceProp lost its clock fields in CUDA 13; the attributes remain (kHz).
  int khz = 0;
  SF_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ordinal));
  d.max_sm_clock_mhz = khz / 1000;
  SF_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, ordinal));
  d.max_mem_clock_mhz = khz / 1000;
  SF_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  SF_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  d.cublaslt_version = cublasLtGetVersion();
  *out = std::move(d);
  return Status();
}

}  // namespace sailfish::bench
