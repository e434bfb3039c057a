#include "stream_read.h"

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.h"
#include "common/launch.cuh"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/griddepcontrol.cuh"

namespace sailfish::bench {

namespace {

// Measured on the H200 among grid-stride and chunked variants of 128-1024 threads and 4-8 loads
// per thread: one contiguous chunk of kThreads * kLoads vectors per block, every load issued
// before any is used, read-only (ld.global.nc) loads. It was the fastest at every size, 8.7 MB to
// 4 GiB (4.68 TB/s over 4 GiB, against 3.97 for coherent ld.global loads in a grid-stride loop).
constexpr int kThreads = 256;
constexpr int kLoads = 4;

template <bool kEvictFirst>
__device__ __forceinline__ uint4 load_vector(const uint4* p, uint64_t policy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (kEvictFirst) {
    uint4 v;
    asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
    return v;
  }
#endif
  (void)policy;
  return __ldg(p);
}

template <bool kEvictFirst, bool kProgrammatic>
__global__ void __launch_bounds__(kThreads)
    stream_read_kernel(const uint4* __restrict__ data, int64_t vectors, uint32_t* sink) {
  uint64_t policy = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (kEvictFirst) policy = gpu::createpolicy_evict_first();
#endif
  const int64_t base = int64_t(blockIdx.x) * (kThreads * kLoads) + threadIdx.x;
  uint4 v[kLoads];
#pragma unroll
  for (int u = 0; u < kLoads; ++u) {
    const int64_t i = base + u * kThreads;
    v[u] = i < vectors ? load_vector<kEvictFirst>(data + i, policy) : make_uint4(0, 0, 0, 0);
  }
  if constexpr (kProgrammatic) gpu::allow_next_grid();
  uint32_t sum = 0;
#pragma unroll
  for (int u = 0; u < kLoads; ++u) sum += v[u].x + v[u].y + v[u].z + v[u].w;
  // A Sailfish kernel writes its output only after the previous kernel has finished.
  if constexpr (kProgrammatic) gpu::wait_for_previous_grid();
  // Depends on every loaded word, so no load can be dropped; practically never true.
  if (sum == 0x9E3779B9u) sink[0] = sum;
}

template <bool kEvictFirst>
Status launch_form(bool programmatic, unsigned blocks, cudaStream_t stream, const uint4* data,
                   int64_t vectors, uint32_t* sink) {
  auto* const kernel = programmatic ? stream_read_kernel<kEvictFirst, true>
                                    : stream_read_kernel<kEvictFirst, false>;
  return gpu::launch(kernel, dim3(blocks), dim3(kThreads), 0, stream, programmatic,
                     "stream_read_kernel", data, vectors, sink);
}

}  // namespace

const char* floor_loads_name(FloorLoads loads) {
  return loads == FloorLoads::kReadOnlyEvictFirst ? "nc-evict-first" : "nc";
}

Status StreamReader::init() { return sink_.allocate(sizeof(uint32_t)); }

Status StreamReader::launch(const void* data, size_t bytes, cudaStream_t stream,
                            FloorLaunch how) const {
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0 || bytes % 16 != 0) {
    return invalid_argument("StreamReader: data must be 16-byte aligned and a multiple of 16 B");
  }
  const int64_t vectors = static_cast<int64_t>(bytes / 16);
  if (vectors == 0) return Status();
  const int64_t per_block = int64_t(kThreads) * kLoads;
  const int64_t blocks = (vectors + per_block - 1) / per_block;
  if (blocks > int64_t(0x7FFFFFFF)) return invalid_argument("StreamReader: buffer too large");
  const auto* v = static_cast<const uint4*>(data);
  uint32_t* sink = sink_.as<uint32_t>();
  const auto grid = static_cast<unsigned>(blocks);
  if (how.loads == FloorLoads::kReadOnlyEvictFirst) {
    return launch_form<true>(how.programmatic_dependent_launch, grid, stream, v, vectors, sink);
  }
  return launch_form<false>(how.programmatic_dependent_launch, grid, stream, v, vectors, sink);
}

}  // namespace sailfish::bench
