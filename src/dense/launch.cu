// Dense tier: launcher of the dequantization kernel (one instantiation per dtype, bit width,
// zero points and act-order: 16 in all, in this one translation unit).
#include "common/cuda_check.h"
#include "common/host_math.h"
#include "common/zero_planes.h"
#include "dense/config.h"
#include "dense/dequantize_kernel.cuh"
#include "dense/launch.h"

namespace sailfish::dense {

namespace {

template <typename T, int kBits>
Status launch_typed(const DequantizeParams& params, bool has_zero, bool act_order, int grid,
                    cudaStream_t stream) {
  if (has_zero) {
    if (act_order) {
      dequantize_kernel<T, kBits, true, true><<<grid, kThreads, 0, stream>>>(params);
    } else {
      dequantize_kernel<T, kBits, true, false><<<grid, kThreads, 0, stream>>>(params);
    }
  } else {
    if (act_order) {
      dequantize_kernel<T, kBits, false, true><<<grid, kThreads, 0, stream>>>(params);
    } else {
      dequantize_kernel<T, kBits, false, false><<<grid, kThreads, 0, stream>>>(params);
    }
  }
  SF_CHECK_LAUNCH("dense dequantize_kernel launch");
  return Status();
}

}  // namespace

Status launch_dequantize(const DeviceWeight& weight, int64_t row_begin, int64_t rows,
                         void* scratch, int64_t ld, int sm_count, cudaStream_t stream) {
  const PackedGeometry& geo = weight.geometry;
  if (row_begin % kTileRows != 0 || rows <= 0 || row_begin + rows > geo.n_pad) {
    return internal_error("dense dequantize: rows [", row_begin, ", ", row_begin + rows,
                          ") are not 64-aligned inside [0, ", geo.n_pad, ")");
  }
  DequantizeParams params;
  params.codes = static_cast<const uint8_t*>(weight.codes);
  params.scales = weight.scales;
  const ::sailfish::detail::ZeroPlanes zero = ::sailfish::detail::zero_planes(weight);
  params.zero_shift = zero.shifts;
  params.zero_fold = zero.folds;
  params.perm = weight.perm;
  params.out = scratch;
  params.ld = ld;
  params.n_pad = geo.n_pad;
  params.k = static_cast<int32_t>(geo.k);
  params.k_blocks = static_cast<int32_t>(geo.k_blocks);
  params.n_block_begin = static_cast<int32_t>(row_begin / kTileRows);
  params.n_block_count = static_cast<int32_t>((rows + kTileRows - 1) / kTileRows);
  // Channelwise: group_rows = k_pad (< 2^30), so every row maps to scale row 0 with shift 30.
  params.group_shift = ::sailfish::detail::group_shift(geo);
  const int64_t blocks = int64_t(params.n_block_count) * params.k_blocks;
  const int grid = static_cast<int>(std::min<int64_t>(blocks, int64_t(sm_count) * kCtasPerSm));
  const bool has_zero = weight.zero_fold != nullptr;
  const bool act_order = weight.perm != nullptr;
  const bool half = weight.scale_dtype == DType::kF16;
  if (geo.bits == 4) {
    return half ? launch_typed<__half, 4>(params, has_zero, act_order, grid, stream)
                : launch_typed<__nv_bfloat16, 4>(params, has_zero, act_order, grid, stream);
  }
  return half ? launch_typed<__half, 8>(params, has_zero, act_order, grid, stream)
              : launch_typed<__nv_bfloat16, 8>(params, has_zero, act_order, grid, stream);
}

}  // namespace sailfish::dense

namespace sailfish {

Status dequantize(const DeviceWeight& weight, void* out, int64_t ld, cudaStream_t stream) {
  const PackedGeometry& geo = weight.geometry;
  // The whole view, geometry included: the kernel indexes codes and scale rows with its n_pad,
  // k_blocks and scale_rows and loads codes as 16-byte vectors.
  if (Status valid = validate(weight); !valid.ok()) {
    return Status(valid.code(), "dequantize: " + valid.message());
  }
  if (out == nullptr) return invalid_argument("dequantize: out is null");
  if (weight.perm != nullptr) {
    return unsupported("dequantize: act-order weights dequantize transposed inside the dense "
                       "tier only; this entry point writes the unpermuted row-major form");
  }
  if (ld < geo.k_pad || ld % 8 != 0 || reinterpret_cast<uintptr_t>(out) % 16 != 0) {
    return invalid_argument("dequantize: ld is ", ld, "; it must be a multiple of 8 and at least "
                            "k_pad = ", geo.k_pad, ", and out 16-byte aligned (the kernel writes "
                            "whole 64-column blocks as 16-byte vectors)");
  }
  int device = 0, sm_count = 0;
  SF_CUDA_CHECK(cudaGetDevice(&device));
  SF_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  // The kernel writes all n_pad rows: out must hold them (documented for callers as [n_pad][ld]).
  return dense::launch_dequantize(weight, 0, geo.n_pad, out, ld, sm_count, stream);
}

}  // namespace sailfish
