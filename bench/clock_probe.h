// Samples the SM clock the GPU runs at right now: one thread counts SM cycles (clock64) over
// ~200 us of wall time (%globaltimer). Taken right after a row's timing, it shows when the H200's
// power cap has pulled the clock down (1.98 -> ~1.3-1.5 GHz, DESIGN.md), which explains rows that
// read slow.
#pragma once

#include <cuda_runtime_api.h>

#include "device_buffer.h"

namespace sailfish::bench {

class ClockProbe {
 public:
  Status init();
  // Synchronizes the stream; writes the clock in MHz.
  Status measure(cudaStream_t stream, double* mhz);

 private:
  DeviceBuffer result_;  // two uint64: cycles, nanoseconds
};

}  // namespace sailfish::bench
