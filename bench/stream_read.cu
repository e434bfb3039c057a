#include "stream_read.h"

#include <algorithm>
#include <cstdint>

namespace sailfish::bench {

namespace {

// Measured on the H200 among grid-stride and chunked variants of 128-1024 threads and 4-8 loads
// per thread: one contiguous chunk of kThreads * kLoads vectors per block, every load issued
// before any is used, read-only (ld.global.nc) loads. It was the fastest at every size, 8.7 MB to
// 4 GiB (4.68 TB/s over 4 GiB, against 3.97 for coherent ld.global loads in a grid-stride loop).
constexpr int kThreads = 256;
constexpr int kLoads = 4;

__global__ void __launch_bounds__(kThreads)
    stream_read_kernel(const uint4* __restrict__ data, int64_t vectors, uint32_t* sink) {
  const int64_t base = int64_t(blockIdx.x) * (kThreads * kLoads) + threadIdx.x;
  uint4 v[kLoads];
#pragma unroll
  for (int u = 0; u < kLoads; ++u) {
    const int64_t i = base + u * kThreads;
    v[u] = i < vectors ? __ldg(data + i) : make_uint4(0, 0, 0, 0);
  }
  uint32_t sum = 0;
#pragma unroll
  for (int u = 0; u < kLoads; ++u) sum += v[u].x + v[u].y + v[u].z + v[u].w;
  // Depends on every loaded word, so no load can be dropped; practically never true.
  if (sum == 0x9E3779B9u) sink[0] = sum;
}

}  // namespace

Status StreamReader::init() { return sink_.allocate(sizeof(uint32_t)); }

Status StreamReader::launch(const void* data, size_t bytes, cudaStream_t stream) const {
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0 || bytes % 16 != 0) {
    return invalid_argument("StreamReader: data must be 16-byte aligned and a multiple of 16 B");
  }
  const int64_t vectors = static_cast<int64_t>(bytes / 16);
  if (vectors == 0) return Status();
  const int64_t per_block = int64_t(kThreads) * kLoads;
  const int64_t blocks = (vectors + per_block - 1) / per_block;
  if (blocks > int64_t(0x7FFFFFFF)) return invalid_argument("StreamReader: buffer too large");
  stream_read_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const uint4*>(data), vectors, sink_.as<uint32_t>());
  SF_CHECK_LAUNCH("stream_read_kernel");
  return Status();
}

}  // namespace sailfish::bench
