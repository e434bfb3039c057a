// sailfish_wgmma_probe's shared pieces (wgmma_probe.cu says what the probe measures): the
// shared-memory budget, the data fill, the conversion every form runs, and timing: each CTA's
// slowest warp in SM cycles (clock64), the median over the SMs of a launch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/dequant.cuh"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/wgmma.cuh"

#define PROBE_CHECK(call)                                                       \
  do {                                                                          \
    cudaError_t e_ = (call);                                                    \
    if (e_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));          \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

namespace sailfish::probe {

using bf16 = __nv_bfloat16;

constexpr int kBlockBytes = 2048;                       // one 64 x 64 int4 block
constexpr int kATileBytes = 64 * 128;                   // one 64 x 64 bf16 tile, K-major
constexpr int kMinSharedBytes = 120 * 1024;             // keeps a second CTA off the SM
constexpr uint32_t kSmallBf16Pair = 0x3c003c00u;        // {0.0078, 0.0078}

__host__ __device__ constexpr int b_tile_bytes(int n) { return (n * 128 + 1023) / 1024 * 1024; }

__device__ __forceinline__ uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

__device__ __forceinline__ uint4 load_shared_16(uint32_t address) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(address));
  return v;
}

// The dynamic shared memory from its first 1024-byte boundary (the 128-byte swizzle of wgmma's
// operand tiles needs it; the dynamic base is only 16-byte aligned): the pointer, and its
// shared-window address in *address. Every kernel asks 1024 bytes more than it uses for this.
__device__ __forceinline__ uint8_t* aligned_shared(uint8_t* smem_raw, uint32_t* address) {
  const uint32_t raw = gpu::shared_address(smem_raw);
  *address = (raw + 1023u) & ~1023u;
  return smem_raw + (*address - raw);
}

// Fills `bytes` of shared memory with pairs of small finite bf16 values (every thread of the
// CTA takes part), so that no operand a copy leaves untouched holds NaN or Inf.
__device__ __forceinline__ void fill_small_pairs(uint8_t* smem, int bytes) {
  for (int i = threadIdx.x; i < bytes / 4; i += blockDim.x) {
    reinterpret_cast<uint32_t*>(smem)[i] = kSmallBf16Pair | (hash32(i) & 0x007f007fu);
  }
}

// The CTA's time, its slowest timed warp (lane 0 of each warp with `timed` reports), into
// cycles[blockIdx.x]. Every thread of the CTA calls it.
__device__ __forceinline__ void record_slowest(long long taken, bool timed, long long* cycles) {
  __shared__ unsigned long long slowest;
  if (threadIdx.x == 0) slowest = 0;
  __syncthreads();
  if (timed && threadIdx.x % 32 == 0) atomicMax(&slowest, static_cast<unsigned long long>(taken));
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = static_cast<long long>(slowest);
}

#if SAILFISH_HAS_WGMMA
// The end of a timed wgmma loop: drains the warp's wgmma groups and reads the clock. The
// accumulators' sum is stored only if it hits a magic value, so none of them is dead code.
template <int kRegs>
__device__ __forceinline__ long long drain_and_stop(float (&acc)[kRegs], float* sink) {
  gpu::wgmma_wait<0>();
#pragma unroll
  for (int r = 0; r < kRegs; ++r) gpu::fence_register(acc[r]);
  const long long stop = clock64();
  float result = 0.0f;
#pragma unroll
  for (int r = 0; r < kRegs; ++r) result += acc[r];
  if (result == 1234.5f) sink[0] = result;
  return stop;
}
#endif

// Converts one word into an A fragment: q - 8, exact, times a scale (one hmul2 a pair).
__device__ __forceinline__ void word_to_scaled_fragment(uint32_t word, uint32_t (&frag)[4]) {
  gpu::Pair<bf16> v[4];
  gpu::int4_word_to_pairs<bf16>(word, v);
  const gpu::Pair<bf16> scale = gpu::bits_as_pair<gpu::Pair<bf16>>(kSmallBf16Pair);
#pragma unroll
  for (int r = 0; r < 4; ++r) v[r] = __hmul2(v[r], scale);
  // mma fragment order: (g, k0k1) (g + 8, k0k1) (g, k8k9) (g + 8, k8k9)
  frag[0] = gpu::pair_bits(v[0]);
  frag[1] = gpu::pair_bits(v[2]);
  frag[2] = gpu::pair_bits(v[1]);
  frag[3] = gpu::pair_bits(v[3]);
}

// The four A fragments of one thread's 16-byte run (four words, four k16 slices): q - 8, exact,
// times the scale of rows g (`scale`) and g + 8 (`scale8`), one hmul2 a pair.
__device__ __forceinline__ void run_to_scaled_fragments(uint4 run, gpu::Pair<bf16> scale,
                                                        gpu::Pair<bf16> scale8,
                                                        uint32_t (&frag)[4][4]) {
  const uint32_t words[4] = {run.x, run.y, run.z, run.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    gpu::Pair<bf16> q[4];
    gpu::int4_word_to_pairs<bf16>(words[k], q);
    frag[k][0] = gpu::pair_bits(__hmul2(q[0], scale));
    frag[k][1] = gpu::pair_bits(__hmul2(q[2], scale8));
    frag[k][2] = gpu::pair_bits(__hmul2(q[1], scale));
    frag[k][3] = gpu::pair_bits(__hmul2(q[3], scale8));
  }
}

// Launches kernel(args...) twice on one CTA an SM (the first pass warms the clocks and the
// instruction cache) and returns the median over the SMs of the second pass's CTA cycles.
template <typename Kernel, typename... Args>
double median_cta_cycles(Kernel kernel, int threads, int shared, int sm_count,
                         const long long* cycles_device, Args... args) {
  shared = std::max(shared, kMinSharedBytes);
  PROBE_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
  for (int pass = 0; pass < 2; ++pass) {
    kernel<<<sm_count, threads, shared>>>(args...);
    PROBE_CHECK(cudaGetLastError());
    PROBE_CHECK(cudaDeviceSynchronize());
  }
  std::vector<long long> cycles(sm_count);
  PROBE_CHECK(cudaMemcpy(cycles.data(), cycles_device, sm_count * sizeof(long long),
                         cudaMemcpyDeviceToHost));
  std::sort(cycles.begin(), cycles.end());
  return static_cast<double>(cycles[sm_count / 2]);
}

// Whether `threads` threads of `kernel` fit its launch bound and the register file.
template <typename Kernel>
bool fits_registers(Kernel kernel, int threads, int max_threads, int* registers = nullptr) {
  cudaFuncAttributes attributes{};
  PROBE_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  if (registers != nullptr) *registers = attributes.numRegs;
  return threads <= max_threads && attributes.numRegs * threads <= 65536;
}

}  // namespace sailfish::probe
