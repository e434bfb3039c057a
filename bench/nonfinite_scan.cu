#include "nonfinite_scan.h"

#include <algorithm>

namespace sailfish::bench {

namespace {

constexpr int kThreads = 256;

// Exponent all ones: Inf or NaN. bf16 has 8 exponent bits, fp16 5.
__device__ __forceinline__ int nonfinite(uint32_t half_bits, uint32_t exp_mask) {
  return (half_bits & exp_mask) == exp_mask ? 1 : 0;
}

__device__ __forceinline__ int nonfinite_pair(uint32_t word, uint32_t exp_mask) {
  return nonfinite(word & 0xFFFFu, exp_mask) + nonfinite(word >> 16, exp_mask);
}

__global__ void nonfinite_kernel(const uint4* vectors, int64_t vector_count, const uint16_t* tail,
                                 int tail_count, uint32_t exp_mask,
                                 unsigned long long* counter) {
  unsigned long long local = 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vector_count;
       i += stride) {
    const uint4 v = vectors[i];
    local += nonfinite_pair(v.x, exp_mask) + nonfinite_pair(v.y, exp_mask) +
             nonfinite_pair(v.z, exp_mask) + nonfinite_pair(v.w, exp_mask);
  }
  if (blockIdx.x == 0 && threadIdx.x < tail_count) local += nonfinite(tail[threadIdx.x], exp_mask);
  // A clean output has no hits, so an atomic per hitting thread costs nothing when it matters.
  if (local != 0) atomicAdd(counter, local);
}

}  // namespace

Status NonfiniteScanner::init() { return counter_.allocate(sizeof(unsigned long long)); }

Status NonfiniteScanner::count(const void* data, int64_t elements, DType dtype,
                               cudaStream_t stream, int64_t* nonfinite_out) {
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0) {
    return invalid_argument("NonfiniteScanner: data is not 16-byte aligned");
  }
  SF_CUDA_CHECK(cudaMemsetAsync(counter_.get(), 0, sizeof(unsigned long long), stream));
  const int64_t vector_count = elements / 8;
  const int tail = static_cast<int>(elements % 8);
  const uint32_t exp_mask = dtype == DType::kBF16 ? 0x7F80u : 0x7C00u;
  const int64_t blocks =
      std::max<int64_t>(1, std::min<int64_t>((vector_count + kThreads - 1) / kThreads, 8192));
  nonfinite_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const uint4*>(data), vector_count,
      static_cast<const uint16_t*>(data) + vector_count * 8, tail, exp_mask,
      counter_.as<unsigned long long>());
  SF_CHECK_LAUNCH("nonfinite_kernel");
  unsigned long long host = 0;
  SF_CUDA_CHECK(cudaMemcpyAsync(&host, counter_.get(), sizeof(host), cudaMemcpyDeviceToHost,
                                stream));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  *nonfinite_out = static_cast<int64_t>(host);
  return Status();
}

Status poison_output(void* data, int64_t elements, cudaStream_t stream) {
  if (elements <= 0) return Status();
  SF_CUDA_CHECK(cudaMemsetAsync(data, 0xFF, static_cast<size_t>(elements) * 2, stream));
  return Status();
}

}  // namespace sailfish::bench
