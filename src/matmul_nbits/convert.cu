// fp32 <-> 16-bit conversion kernels of MatMulNBitsOp (fp32 activations). Both are pure streams:
// each thread moves 16 bytes of fp32 per step (one float4) and 8 bytes of 16-bit values, in a
// grid-stride loop sized to keep every SM busy without launching one CTA per 1 KB of data.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.h"
#include "matmul_nbits/convert.h"

namespace sailfish::matmul_nbits {

namespace {

constexpr int kThreads = 256;
// 8 CTAs of 256 threads per SM: full occupancy for these register-light kernels, with enough
// 16-byte loads in flight to cover DRAM latency.
constexpr int kCtasPerSm = 8;

template <typename T>
struct Convert;

template <>
struct Convert<__half> {
  // Two floats -> one 32-bit word holding {lo, hi} (lo at the lower address), one cvt.f16x2.
  static __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    const __half2 v = __floats2half2_rn(lo, hi);
    return uint32_t(__half_as_ushort(__low2half(v))) |
           (uint32_t(__half_as_ushort(__high2half(v))) << 16);
  }
  static __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
  static __device__ __forceinline__ float to_float(uint16_t bits) {
    return __half2float(__ushort_as_half(bits));
  }
};

template <>
struct Convert<__nv_bfloat16> {
  static __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return uint32_t(__bfloat16_as_ushort(__low2bfloat16(v))) |
           (uint32_t(__bfloat16_as_ushort(__high2bfloat16(v))) << 16);
  }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float v) {
    return __float2bfloat16_rn(v);
  }
  static __device__ __forceinline__ float to_float(uint16_t bits) {
    return __bfloat162float(__ushort_as_bfloat16(bits));
  }
};

// vectorized: src 16-byte and dst 8-byte aligned; the count % 4 tail is done element-wise.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    f32_to_16_kernel(const float* __restrict__ src, T* __restrict__ dst, int64_t count,
                     bool vectorized) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t tail_begin = 0;
  if (vectorized) {
    const int64_t vectors = count / 4;
    const float4* src4 = reinterpret_cast<const float4*>(src);
    uint2* dst4 = reinterpret_cast<uint2*>(dst);
    for (int64_t i = first; i < vectors; i += stride) {
      const float4 v = src4[i];
      dst4[i] = make_uint2(Convert<T>::pack2(v.x, v.y), Convert<T>::pack2(v.z, v.w));
    }
    tail_begin = vectors * 4;
  }
  for (int64_t i = tail_begin + first; i < count; i += stride) {
    dst[i] = Convert<T>::from_float(src[i]);
  }
}

// vectorized: cols % 4 == 0 (so a 4-element step never crosses a row), src 8-byte and y 16-byte
// aligned. The bias is read element-wise: it is N floats, L1/L2-resident after the first row.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    to_f32_bias_kernel(const uint16_t* __restrict__ src, const float* __restrict__ bias,
                       float* __restrict__ y, int64_t count, int64_t cols, bool vectorized) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (vectorized) {
    const int64_t vectors = count / 4;
    const uint2* src4 = reinterpret_cast<const uint2*>(src);
    float4* y4 = reinterpret_cast<float4*>(y);
    for (int64_t i = first; i < vectors; i += stride) {
      const uint2 raw = src4[i];
      float4 out = make_float4(Convert<T>::to_float(uint16_t(raw.x & 0xffffu)),
                               Convert<T>::to_float(uint16_t(raw.x >> 16)),
                               Convert<T>::to_float(uint16_t(raw.y & 0xffffu)),
                               Convert<T>::to_float(uint16_t(raw.y >> 16)));
      if (bias != nullptr) {
        const int64_t col = (i * 4) % cols;
        out.x += bias[col];
        out.y += bias[col + 1];
        out.z += bias[col + 2];
        out.w += bias[col + 3];
      }
      y4[i] = out;
    }
    return;
  }
  for (int64_t i = first; i < count; i += stride) {
    const float v = Convert<T>::to_float(src[i]);
    y[i] = bias != nullptr ? v + bias[i % cols] : v;
  }
}

int grid_for(int64_t work_items, int sm_count) {
  const int64_t wanted = (work_items + kThreads - 1) / kThreads;
  const int64_t cap = int64_t(std::max(sm_count, 1)) * kCtasPerSm;
  return static_cast<int>(std::max<int64_t>(1, std::min(wanted, cap)));
}

bool aligned(const void* p, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

}  // namespace

Status launch_f32_to_16(const float* src, void* dst, int64_t count, DType dtype, int sm_count,
                        cudaStream_t stream) {
  if (count < 0) return internal_error("launch_f32_to_16: count ", count, " < 0");
  if (count == 0) return Status();
  if (src == nullptr || dst == nullptr) return internal_error("launch_f32_to_16: null pointer");
  const bool vectorized = aligned(src, 16) && aligned(dst, 8);
  const int grid = grid_for(vectorized ? count / 4 + count % 4 : count, sm_count);
  if (dtype == DType::kF16) {
    f32_to_16_kernel<__half><<<grid, kThreads, 0, stream>>>(src, static_cast<__half*>(dst), count,
                                                            vectorized);
  } else if (dtype == DType::kBF16) {
    f32_to_16_kernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(
        src, static_cast<__nv_bfloat16*>(dst), count, vectorized);
  } else {
    return internal_error("launch_f32_to_16: dtype ", dtype_name(dtype), " is not 16-bit");
  }
  SF_CHECK_LAUNCH("matmul_nbits f32_to_16_kernel launch");
  return Status();
}

Status launch_16_to_f32_bias(const void* src, DType dtype, const float* bias, float* y,
                             int64_t rows, int64_t cols, int sm_count, cudaStream_t stream) {
  if (rows < 0 || cols <= 0) {
    return internal_error("launch_16_to_f32_bias: shape [", rows, ", ", cols, "]");
  }
  const int64_t count = rows * cols;
  if (count == 0) return Status();
  if (src == nullptr || y == nullptr) return internal_error("launch_16_to_f32_bias: null pointer");
  const bool vectorized = cols % 4 == 0 && aligned(src, 8) && aligned(y, 16);
  const int grid = grid_for(vectorized ? count / 4 : count, sm_count);
  const auto* bits = static_cast<const uint16_t*>(src);
  if (dtype == DType::kF16) {
    to_f32_bias_kernel<__half><<<grid, kThreads, 0, stream>>>(bits, bias, y, count, cols,
                                                              vectorized);
  } else if (dtype == DType::kBF16) {
    to_f32_bias_kernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(bits, bias, y, count, cols,
                                                                     vectorized);
  } else {
    return internal_error("launch_16_to_f32_bias: dtype ", dtype_name(dtype), " is not 16-bit");
  }
  SF_CHECK_LAUNCH("matmul_nbits to_f32_bias_kernel launch");
  return Status();
}

}  // namespace sailfish::matmul_nbits
