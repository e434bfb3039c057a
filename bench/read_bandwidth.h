// Streaming-read bandwidth of this GPU, measured once per run: the memory roof of the roofline.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stream_read.h"

namespace sailfish::bench {

struct ReadBandwidth {
  double tbps = 0.0;            // median of the fastest load form, 1e12 bytes per second
  size_t bytes = 0;             // buffer streamed per sample
  std::vector<double> samples;  // TB/s of each timed sweep of that form
  std::string form;             // floor_loads_name of that form
  std::vector<std::pair<std::string, double>> medians;  // every form's median
};

// The floor kernel's 16-byte loads in each load form (kFloorLoadForms) over a random-filled
// buffer of `bytes`: per form one warm-up sweep, then `reps` sweeps timed one by one with events.
// The roof is the fastest form's median. The buffer is freed before returning.
Status measure_read_bandwidth(const StreamReader& reader, size_t bytes, int reps, uint64_t seed,
                              cudaStream_t stream, ReadBandwidth* out);

}  // namespace sailfish::bench
