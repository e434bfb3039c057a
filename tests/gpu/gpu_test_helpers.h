// Helpers for GPU tests: skip cleanly without a device, check CUDA calls, hold device buffers.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace sailfish::testing {

inline bool has_cuda_device() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// The current device runs thread-block clusters (sm_90 and later): the decode tier's cluster
// epilogue and its Stream-K grid.
inline bool device_has_clusters() {
  int device = 0, major = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) ==
             cudaSuccess &&
         major >= 9;
}

// The current device's SM count, or 0 when it cannot be read (the plan tests assert it is
// positive before they use it).
inline int device_sm_count() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return 0;
  }
  return sms;
}

// SAILFISH_REQUIRE_GPU=1 (set by scripts/device_round.sh on GPU hosts): a missing device is a
// failure, not a skip, so a driver that fails to load cannot turn the whole suite green.
inline bool gpu_required() {
  const char* v = std::getenv("SAILFISH_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

#define SF_SKIP_WITHOUT_GPU()                                         \
  do {                                                                \
    if (!::sailfish::testing::has_cuda_device()) {                    \
      if (::sailfish::testing::gpu_required()) {                      \
        GTEST_FAIL() << "no CUDA device, and SAILFISH_REQUIRE_GPU=1"; \
      }                                                               \
      GTEST_SKIP() << "no CUDA device";                               \
    }                                                                 \
  } while (0)

#define SF_ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

// A device buffer freed on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) { allocate(bytes); }
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  bool allocate(size_t bytes) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = bytes;
    return bytes == 0 || cudaMalloc(&ptr_, bytes) == cudaSuccess;
  }
  template <typename T>
  bool upload(const std::vector<T>& host) {
    if (!allocate(host.size() * sizeof(T))) return false;
    return host.empty() ||
           cudaMemcpy(ptr_, host.data(), bytes_, cudaMemcpyHostToDevice) == cudaSuccess;
  }
  template <typename T>
  std::vector<T> download() const {
    std::vector<T> host(bytes_ / sizeof(T));
    if (!host.empty()) cudaMemcpy(host.data(), ptr_, bytes_, cudaMemcpyDeviceToHost);
    return host;
  }
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace sailfish::testing
