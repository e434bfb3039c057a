#include "api/sm_clock.h"

#include "common/cuda_check.h"

namespace sailfish::detail {

namespace {

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void sm_clock_probe_kernel(uint64_t spin_ns, unsigned long long* out) {
  const uint64_t t0 = global_ns();
  const long long c0 = clock64();
  uint64_t t1 = t0;
  while (t1 - t0 < spin_ns) t1 = global_ns();
  const long long c1 = clock64();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = static_cast<unsigned long long>(t1 - t0);
}

}  // namespace

SmClockProbe::~SmClockProbe() {
  if (result_ != nullptr) cudaFree(result_);
}

Status SmClockProbe::init() {
  if (result_ != nullptr) return Status();
  const cudaError_t err = cudaMalloc(&result_, 2 * sizeof(unsigned long long));
  if (err != cudaSuccess) {
    result_ = nullptr;
    cudaGetLastError();  // an allocation failure is not sticky; clear it
    return cuda_status(err, "SmClockProbe: cudaMalloc of two words");
  }
  return Status();
}

Status SmClockProbe::measure(cudaStream_t stream, double* mhz, uint64_t spin_ns) {
  if (result_ == nullptr) {
    return Status(StatusCode::kInvalidArgument, "SmClockProbe::measure before init()");
  }
  sm_clock_probe_kernel<<<1, 1, 0, stream>>>(spin_ns, result_);
  SF_CHECK_LAUNCH("sm_clock_probe_kernel");
  unsigned long long host[2] = {0, 0};
  SF_CUDA_CHECK(cudaMemcpyAsync(host, result_, sizeof(host), cudaMemcpyDeviceToHost, stream));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  *mhz = host[1] > 0 ? 1e3 * static_cast<double>(host[0]) / static_cast<double>(host[1]) : 0.0;
  return Status();
}

}  // namespace sailfish::detail
