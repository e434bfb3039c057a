// Does the decode kernel's weight access pattern, by itself, stream slower than the floor? (v49,
// docs/perf/decode.md.) The warp-split kernel at M = 1 on l3-70b.down (256 CTAs, two an SM by
// padded shared memory, 4 warps, a 4-stage cp.async ring of 2 KB blocks a warp) runs a per-k-block
// slope 1.034x the floor's. This probe runs the same grid, ring and copies with no math, only one
// shared load a block, so any gap left to the floor is the access pattern's:
//   order 0: each warp streams its own contiguous quarter of the CTA's range (the kernel's order);
//   order c > 0: the CTA's 4 warps take chunks of c blocks in turn, so the CTA reads one
//   contiguous run, 4 c blocks wide, at a time.
// Built and run by scripts/perf/stream_pattern_probe.sh; prints one line per configuration.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/ptx/cp_async.cuh"

namespace {

constexpr int kWarps = 4;
constexpr int kBlockBytes = 2048;

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t e = (call);                                                      \
    if (e != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

template <int kStages>
__global__ void __launch_bounds__(kWarps * 32) ring_stream(const uint8_t* buf, int cta_blocks,
                                                            int chunk, uint32_t* sink) {
  extern __shared__ __align__(16) uint8_t smem[];
  using namespace sailfish::gpu;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_blocks = cta_blocks / kWarps;
  const uint8_t* cta_base = buf + int64_t(blockIdx.x) * cta_blocks * kBlockBytes;
  const uint32_t ring = shared_address(smem + warp * kStages * kBlockBytes);
  const uint64_t policy = createpolicy_evict_first();
  auto block_of = [&](int i) {  // the CTA-relative block of the warp's i-th block
    if (chunk == 0) return warp * warp_blocks + i;
    return (i / chunk * kWarps + warp) * chunk + i % chunk;
  };
  auto issue = [&](int i) {
    const bool valid = i < warp_blocks;
    const uint8_t* src = cta_base + int64_t(block_of(valid ? i : 0)) * kBlockBytes + lane * 16;
    const uint32_t dst = ring + (i % kStages) * kBlockBytes + lane * 16;
    cp_async_16_if_at_hint<0>(valid, dst, src, policy);
    cp_async_16_if_at_hint<512>(valid, dst, src, policy);
    cp_async_16_if_at_hint<1024>(valid, dst, src, policy);
    cp_async_16_if_at_hint<1536>(valid, dst, src, policy);
    cp_async_commit();
  };
  for (int i = 0; i < kStages - 1; ++i) issue(i);
  uint32_t acc = 0;
  for (int i = 0; i < warp_blocks; ++i) {
    cp_async_wait<kStages - 2>();
    __syncwarp();
    issue(i + kStages - 1);
    acc ^= *reinterpret_cast<const uint32_t*>(smem + warp * kStages * kBlockBytes +
                                              (i % kStages) * kBlockBytes + lane * 4);
  }
  cp_async_wait<0>();
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

__global__ void floor_stream(const uint4* buf, int64_t words, uint32_t* sink) {
  uint32_t acc = 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < words; i += stride) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(buf + i));
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

template <typename Launch>
float time_us(Launch&& launch, int launches) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> reps;
  for (int r = 0; r < 7; ++r) {
    CHECK(cudaEventRecord(start));
    for (int l = 0; l < launches; ++l) launch(l);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    reps.push_back(1000.0f * ms / launches);
  }
  CHECK(cudaGetLastError());
  std::sort(reps.begin(), reps.end());
  return reps[reps.size() / 2];
}

// Shared memory a CTA asks for so that exactly `per_sm` fit an SM (the bench's spread padding).
int padded_shared(int ring_bytes, int per_sm, const cudaDeviceProp& prop) {
  const int per_cta_reserved = static_cast<int>(prop.reservedSharedMemPerBlock);
  const int pad = static_cast<int>(prop.sharedMemPerMultiprocessor) / (per_sm + 1) -
                  per_cta_reserved + 16;
  return std::max(ring_bytes, pad);
}

template <int kStages>
void run_ring(const std::vector<const uint8_t*>& bufs, int64_t bytes, int ctas, int per_sm,
              int chunk, uint32_t* sink, const cudaDeviceProp& prop, float floor_us) {
  const int cta_blocks = static_cast<int>(bytes / kBlockBytes / ctas) / kWarps * kWarps;
  const int shared = padded_shared(kWarps * kStages * kBlockBytes, per_sm, prop);
  CHECK(cudaFuncSetAttribute(ring_stream<kStages>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             shared));
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, ring_stream<kStages>,
                                                      kWarps * 32, shared));
  const float us = time_us(
      [&](int l) {
        ring_stream<kStages><<<ctas, kWarps * 32, shared>>>(bufs[l % bufs.size()], cta_blocks,
                                                            chunk, sink);
      },
      20);
  const double streamed = double(cta_blocks) * ctas * kBlockBytes;
  std::printf("ring ctas=%d per_sm=%d(resident %d) stages=%d chunk=%d blocks_a_warp=%d: %.2f us, "
              "%.3f TB/s, x floor %.3f\n",
              ctas, per_sm, resident, kStages, chunk, cta_blocks / kWarps, us,
              streamed / us * 1e-6, us / floor_us * bytes / streamed);
}

}  // namespace

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int64_t bytes = int64_t(28672) * 8192 / 2;  // l3-70b.down's int4 codes
  std::vector<const uint8_t*> bufs;
  for (int b = 0; b < 3; ++b) {
    uint8_t* p = nullptr;
    CHECK(cudaMalloc(&p, bytes));
    CHECK(cudaMemset(p, b + 1, bytes));
    bufs.push_back(p);
  }
  uint32_t* sink = nullptr;
  CHECK(cudaMalloc(&sink, sizeof(uint32_t) * 1 << 22));
  const int sms = prop.multiProcessorCount;
  float floor_us = 1e30f;
  for (int per_sm : {4, 8, 16}) {
    const float us = time_us(
        [&](int l) {
          floor_stream<<<sms * per_sm, 256>>>(reinterpret_cast<const uint4*>(bufs[l % 3]),
                                               bytes / 16, sink);
        },
        20);
    std::printf("floor ctas=%d x 256 threads: %.2f us, %.3f TB/s\n", sms * per_sm, us,
                bytes / us * 1e-6);
    floor_us = std::min(floor_us, us);
  }
  for (int chunk : {0, 1, 2, 4}) run_ring<4>(bufs, bytes, 256, 2, chunk, sink, prop, floor_us);
  for (int chunk : {0, 2}) run_ring<5>(bufs, bytes, 256, 2, chunk, sink, prop, floor_us);
  for (int chunk : {0, 2}) run_ring<6>(bufs, bytes, 256, 2, chunk, sink, prop, floor_us);
  run_ring<4>(bufs, bytes, 512, 4, 0, sink, prop, floor_us);
  run_ring<4>(bufs, bytes, 384, 3, 0, sink, prop, floor_us);
  run_ring<4>(bufs, bytes, 264, 2, 0, sink, prop, floor_us);  // an even share: 2 on every SM
  return 0;
}
