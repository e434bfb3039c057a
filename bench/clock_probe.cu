#include "clock_probe.h"

#include <cstdint>

namespace sailfish::bench {

namespace {

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void clock_probe_kernel(uint64_t spin_ns, unsigned long long* out) {
  const uint64_t t0 = global_ns();
  const long long c0 = clock64();
  uint64_t t1 = t0;
  while (t1 - t0 < spin_ns) t1 = global_ns();
  const long long c1 = clock64();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = static_cast<unsigned long long>(t1 - t0);
}

// Long against the globaltimer's update step (up to ~1 us on some parts), short against a row.
constexpr uint64_t kSpinNs = 200000;

}  // namespace

Status ClockProbe::init() { return result_.allocate(2 * sizeof(unsigned long long)); }

Status ClockProbe::measure(cudaStream_t stream, double* mhz) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(kSpinNs, result_.as<unsigned long long>());
  SF_CHECK_LAUNCH("clock_probe_kernel");
  unsigned long long host[2] = {0, 0};
  SF_CUDA_CHECK(cudaMemcpyAsync(host, result_.get(), sizeof(host), cudaMemcpyDeviceToHost,
                                stream));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  *mhz = host[1] > 0 ? 1e3 * static_cast<double>(host[0]) / static_cast<double>(host[1]) : 0.0;
  return Status();
}

}  // namespace sailfish::bench
