// Counts NaN and Inf elements of a fp16/bf16 tensor on the device. The output is poisoned with
// 0xFF bytes (a NaN in both types) before a checked call, so any element the kernel failed to
// write, and any it computed as non-finite, is counted.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "device_buffer.h"
#include "sailfish/types.h"

namespace sailfish::bench {

class NonfiniteScanner {
 public:
  Status init();
  // Synchronizes the stream. data must be 16-byte aligned.
  Status count(const void* data, int64_t elements, DType dtype, cudaStream_t stream,
               int64_t* nonfinite);

 private:
  DeviceBuffer counter_;
};

// Fills a fp16/bf16 output with 0xFFFF (NaN) before a checked call.
Status poison_output(void* data, int64_t elements, cudaStream_t stream);

}  // namespace sailfish::bench
