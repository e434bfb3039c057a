// The timing method of DESIGN.md: capture `launches` calls into one CUDA graph, replay it a few
// times untimed, then time `replays` replays one by one with events and take the median. Graphs
// remove the host launch gaps that would otherwise dominate 2-60 us decode kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "sailfish/status.h"

namespace sailfish::bench {

struct GraphTiming {
  double us_per_call = 0.0;      // median replay time / launches
  double median_replay_ms = 0.0;
  double min_replay_ms = 0.0, max_replay_ms = 0.0;
  int launches = 0;
  int replays = 0;
};

// Enqueues call number `launch` (0-based) on the stream; the caller picks the weight copy from it.
using EnqueueFn = std::function<Status(int launch, cudaStream_t stream)>;

// The stream must be idle and non-blocking. On an error inside capture the capture is ended and
// discarded before returning, so the stream stays usable.
Status time_in_graph(int launches, int warmup_replays, int replays, cudaStream_t stream,
                     const EnqueueFn& enqueue, GraphTiming* out);

}  // namespace sailfish::bench
