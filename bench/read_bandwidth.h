// Streaming-read bandwidth of this GPU, measured once per run: the memory roof of the roofline.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "stream_read.h"

namespace sailfish::bench {

struct ReadBandwidth {
  double tbps = 0.0;            // median, 1e12 bytes per second
  size_t bytes = 0;             // buffer streamed per sample
  std::vector<double> samples;  // TB/s of each timed sweep
};

// Plain 16-byte loads over a random-filled buffer of `bytes`, one warm-up sweep, then `reps`
// sweeps timed one by one with events; the buffer is freed before returning.
Status measure_read_bandwidth(const StreamReader& reader, size_t bytes, int reps, uint64_t seed,
                              cudaStream_t stream, ReadBandwidth* out);

}  // namespace sailfish::bench
