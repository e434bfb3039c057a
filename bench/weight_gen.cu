#include "weight_gen.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "common/cuda_check.h"
#include "format/zero_split.h"
#include "random_hash.h"

namespace sailfish::bench {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ uint16_t to_bits(float v, bool bf16) {
  return bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(v)) : __half_as_ushort(__float2half_rn(v));
}

__global__ void scales_kernel(ScaleFill f, uint16_t* scales, uint16_t* zero_fold, uint64_t seed) {
  const bool bf16 = f.dtype == DType::kBF16;
  const int64_t total = f.scale_rows * f.n_pad;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t row = i / f.n_pad, col = i % f.n_pad;
    float s = 0.0f, fold = 0.0f;
    uint16_t shift = 0;
    if (row < f.live_rows && col < f.n) {
      const uint64_t h = hash_at(seed, uint64_t(i));
      const float mantissa = 1.0f + float(h & 7) * 0.125f;
      const int exponent = 6 + int((h >> 3) % 3);
      s = ldexpf(mantissa, -exponent);
      if (((h >> 8) & 3) == 0) s = -s;
      const int zp = int((h >> 16) & ((1u << f.bits) - 1));  // an integer zero point
      // The packer's split (s is exact in the dtype): shift = zp, fold = +0.0.
      const format::ZeroSplit split = format::split_zero_point(zp, s, f.bits);
      shift = static_cast<uint16_t>(split.shift);
      fold = static_cast<float>(split.fold);
    }
    scales[i] = to_bits(s, bf16);
    if (zero_fold != nullptr) {
      zero_fold[i] = shift;
      zero_fold[total + i] = to_bits(fold, bf16);
    }
  }
}

__global__ void word_patch_kernel(uint32_t* words, const int64_t* index, const uint32_t* keep,
                                  const uint32_t* set, int64_t count) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    uint32_t& w = words[index[i]];
    w = (w & keep[i]) | set[i];
  }
}

unsigned grid_for(int64_t count) {
  return static_cast<unsigned>(
      std::max<int64_t>(1, std::min<int64_t>((count + kThreads - 1) / kThreads, 65536)));
}

}  // namespace

Status fill_scales(const ScaleFill& fill, void* scales, void* zero_fold, uint64_t seed,
                   cudaStream_t stream) {
  if (fill.dtype != DType::kBF16 && fill.dtype != DType::kF16) {
    return invalid_argument("fill_scales: dtype must be bf16 or fp16");
  }
  const int64_t total = fill.scale_rows * fill.n_pad;
  if (total <= 0) return Status();
  scales_kernel<<<grid_for(total), kThreads, 0, stream>>>(
      fill, static_cast<uint16_t*>(scales), static_cast<uint16_t*>(zero_fold), seed);
  SF_CHECK_LAUNCH("scales_kernel");
  return Status();
}

Status apply_word_patches(uint32_t* words, const int64_t* index, const uint32_t* keep,
                          const uint32_t* set, int64_t count, cudaStream_t stream) {
  if (count <= 0) return Status();
  word_patch_kernel<<<grid_for(count), kThreads, 0, stream>>>(words, index, keep, set, count);
  SF_CHECK_LAUNCH("word_patch_kernel");
  return Status();
}

}  // namespace sailfish::bench
