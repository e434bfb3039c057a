#include "random_fill.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "common/cuda_check.h"
#include "random_hash.h"

namespace sailfish::bench {

namespace {

constexpr int kThreads = 256;

// Grid for a grid-stride loop over count items: enough blocks to fill the GPU, capped so huge
// buffers do not need a huge grid.
unsigned grid_for(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(blocks, 65536)));
}

__global__ void random_bytes_kernel(uint4* dst, int64_t vectors, uint8_t* tail, int tail_bytes,
                                    uint64_t tail_index, uint64_t seed) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride) {
    const uint64_t lo = hash_at(seed, 2 * uint64_t(i));
    const uint64_t hi = hash_at(seed, 2 * uint64_t(i) + 1);
    dst[i] = make_uint4(uint32_t(lo), uint32_t(lo >> 32), uint32_t(hi), uint32_t(hi >> 32));
  }
  if (blockIdx.x == 0 && threadIdx.x < tail_bytes) {
    tail[threadIdx.x] = uint8_t(hash_at(seed, tail_index + threadIdx.x));
  }
}

__global__ void random_values_kernel(uint16_t* dst, int64_t count, bool bf16, float amplitude,
                                     uint64_t seed) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    // 24 random bits -> [0, 1) exactly in float, then to [-amplitude, amplitude).
    const float u = float(hash_at(seed, uint64_t(i)) >> 40) * (1.0f / 16777216.0f);
    const float v = amplitude * (2.0f * u - 1.0f);
    dst[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(v))
                  : __half_as_ushort(__float2half_rn(v));
  }
}

}  // namespace

Status fill_random_bytes(void* dst, size_t bytes, uint64_t seed, cudaStream_t stream) {
  if (bytes == 0) return Status();
  if (reinterpret_cast<uintptr_t>(dst) % 16 != 0) {
    return invalid_argument("fill_random_bytes: destination is not 16-byte aligned");
  }
  const int64_t vectors = static_cast<int64_t>(bytes / 16);
  const int tail = static_cast<int>(bytes % 16);
  random_bytes_kernel<<<grid_for(std::max<int64_t>(vectors, 1)), kThreads, 0, stream>>>(
      static_cast<uint4*>(dst), vectors, static_cast<uint8_t*>(dst) + vectors * 16, tail,
      2 * uint64_t(vectors) + 2, seed);
  SF_CHECK_LAUNCH("random_bytes_kernel");
  return Status();
}

Status fill_random_values(void* dst, int64_t count, DType dtype, float amplitude, uint64_t seed,
                          cudaStream_t stream) {
  if (count <= 0) return Status();
  if (dtype != DType::kBF16 && dtype != DType::kF16) {
    return invalid_argument("fill_random_values: dtype must be bf16 or fp16");
  }
  random_values_kernel<<<grid_for(count), kThreads, 0, stream>>>(
      static_cast<uint16_t*>(dst), count, dtype == DType::kBF16, amplitude, seed);
  SF_CHECK_LAUNCH("random_values_kernel");
  return Status();
}

uint64_t derive_seed(uint64_t base, uint64_t a, uint64_t b, uint64_t c) {
  return mix64(mix64(mix64(base ^ mix64(a)) ^ b) ^ c);
}

}  // namespace sailfish::bench
