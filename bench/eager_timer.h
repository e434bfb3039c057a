// Eager timing, beside the graph timing of graph_timer.h: the same calls enqueued one by one
// from the host with no graph, as an engine that does not capture graphs calls the library. Each
// round enqueues `launches` calls back to back between two events, so its GPU time includes the
// gaps the host leaves when one call's enqueue takes longer than the previous call's kernels;
// the host time is the enqueue loop's wall time alone, with no synchronization in it.
#pragma once

#include <cuda_runtime_api.h>

#include "eager_summary.h"
#include "graph_timer.h"
#include "sailfish/status.h"

namespace sailfish::bench {

// Enqueues `launches` calls (enqueue(i), i = 0..launches-1) `warmup_rounds` times untimed, then
// `rounds` times timed. The stream must be idle.
Status time_eager(int launches, int warmup_rounds, int rounds, cudaStream_t stream,
                  const EnqueueFn& enqueue, EagerTiming* out);

}  // namespace sailfish::bench
