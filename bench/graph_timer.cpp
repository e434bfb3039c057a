#include "graph_timer.h"

#include <algorithm>

#include "device_buffer.h"
#include "stats.h"

namespace sailfish::bench {

namespace {

// Destroys a graph and its executable on scope exit.
struct GraphHolder {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~GraphHolder() {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
};

}  // namespace

Status time_in_graph(int launches, int warmup_replays, int replays, cudaStream_t stream,
                     const EnqueueFn& enqueue, GraphTiming* out) {
  if (launches < 1 || replays < 1) return invalid_argument("time_in_graph: nothing to time");
  GraphHolder g;
  // Global mode: a call that is not capture-safe (a sync, an allocation) in any thread fails the
  // capture instead of silently escaping the graph.
  SF_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  Status enqueued;
  for (int i = 0; i < launches && enqueued.ok(); ++i) enqueued = enqueue(i, stream);
  const cudaError_t ended = cudaStreamEndCapture(stream, &g.graph);
  if (!enqueued.ok()) {
    cudaGetLastError();  // an invalidated capture leaves an error behind; the Status says it all
    return Status(enqueued.code(), "while capturing a CUDA graph: " + enqueued.message());
  }
  SF_CUDA_CHECK(ended);
  SF_CUDA_CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));
  SF_CUDA_CHECK(cudaGraphUpload(g.exec, stream));
  for (int i = 0; i < warmup_replays; ++i) SF_CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));

  CudaEvent start, stop;
  SF_RETURN_IF_ERROR(start.create());
  SF_RETURN_IF_ERROR(stop.create());
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(replays));
  for (int r = 0; r < replays; ++r) {
    SF_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    SF_CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
    SF_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    float elapsed = 0.0f;
    SF_RETURN_IF_ERROR(elapsed_ms(start, stop, &elapsed));
    ms.push_back(static_cast<double>(elapsed));
  }
  // A kernel fault inside the graph surfaces here at the latest.
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  SF_CUDA_CHECK(cudaGetLastError());

  GraphTiming t;
  t.launches = launches;
  t.replays = replays;
  t.median_replay_ms = median(ms);
  t.min_replay_ms = *std::min_element(ms.begin(), ms.end());
  t.max_replay_ms = *std::max_element(ms.begin(), ms.end());
  t.us_per_call = t.median_replay_ms * 1e3 / launches;
  *out = t;
  return Status();
}

}  // namespace sailfish::bench
