#include "eager_timer.h"

#include <chrono>

#include "device_buffer.h"

namespace sailfish::bench {

Status time_eager(int launches, int warmup_rounds, int rounds, cudaStream_t stream,
                  const EnqueueFn& enqueue, EagerTiming* out) {
  if (launches < 1 || rounds < 1) return invalid_argument("time_eager: nothing to time");
  for (int r = 0; r < warmup_rounds; ++r) {
    for (int i = 0; i < launches; ++i) SF_RETURN_IF_ERROR(enqueue(i, stream));
  }
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));

  CudaEvent start, stop;
  SF_RETURN_IF_ERROR(start.create());
  SF_RETURN_IF_ERROR(stop.create());
  std::vector<double> host_us, gpu_ms;
  host_us.reserve(static_cast<size_t>(rounds));
  gpu_ms.reserve(static_cast<size_t>(rounds));
  for (int r = 0; r < rounds; ++r) {
    SF_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    const auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) SF_RETURN_IF_ERROR(enqueue(i, stream));
    const auto end = std::chrono::steady_clock::now();
    SF_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    float elapsed = 0.0f;
    SF_RETURN_IF_ERROR(elapsed_ms(start, stop, &elapsed));  // synchronizes on stop
    host_us.push_back(std::chrono::duration<double, std::micro>(end - begin).count());
    gpu_ms.push_back(static_cast<double>(elapsed));
  }
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  SF_CUDA_CHECK(cudaGetLastError());
  *out = summarize_eager(host_us, gpu_ms, launches);
  return Status();
}

}  // namespace sailfish::bench
