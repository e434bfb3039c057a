// The floor kernel: it only streams bytes. Launched on a weight copy exactly as a Sailfish call is
// (same graph size, same rotation), its time is what launch and ramp latency plus the memory system
// allow for those bytes; a GEMM's ratio to it is the part that is the kernel's own inefficiency.
// The same kernel over a few GiB measures the streaming-read bandwidth of the roofline.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "device_buffer.h"

namespace sailfish::bench {

class StreamReader {
 public:
  Status init();
  // Reads [data, data + bytes) with 16-byte loads. data 16-byte aligned, bytes a multiple of 16.
  Status launch(const void* data, size_t bytes, cudaStream_t stream) const;

 private:
  DeviceBuffer sink_;  // written only when the checksum hits a magic value: keeps loads alive
};

}  // namespace sailfish::bench
