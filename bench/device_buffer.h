// RAII owners for the CUDA objects the bench creates: a device allocation, a stream, events.
// Errors come back as Status (never thrown); destructors ignore errors, as there is nothing useful
// left to do with one at that point.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/cuda_check.h"
#include "sailfish/status.h"

namespace sailfish::bench {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = other.ptr_;
      bytes_ = other.bytes_;
      other.ptr_ = nullptr;
      other.bytes_ = 0;
    }
    return *this;
  }

  // Frees what was held, then allocates bytes (cudaMalloc: 256-byte aligned). 0 holds nothing.
  Status allocate(size_t bytes) {
    reset();
    if (bytes == 0) return Status();
    SF_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    bytes_ = bytes;
    return Status();
  }
  // Keeps the allocation when it is already large enough (workspaces grow, never shrink).
  Status ensure(size_t bytes) { return bytes <= bytes_ ? Status() : allocate(bytes); }
  void reset() {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

class CudaStream {
 public:
  CudaStream() = default;
  ~CudaStream() { if (stream_ != nullptr) cudaStreamDestroy(stream_); }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  // Non-blocking: graph capture must not be disturbed by implicit legacy-stream syncs.
  Status create() {
    SF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    return Status();
  }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class CudaEvent {
 public:
  CudaEvent() = default;
  ~CudaEvent() { if (event_ != nullptr) cudaEventDestroy(event_); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  Status create() {
    SF_CUDA_CHECK(cudaEventCreate(&event_));
    return Status();
  }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Milliseconds between two recorded events; waits for the second one.
inline Status elapsed_ms(const CudaEvent& start, const CudaEvent& stop, float* ms) {
  SF_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  SF_CUDA_CHECK(cudaEventElapsedTime(ms, start.get(), stop.get()));
  return Status();
}

}  // namespace sailfish::bench
