// Dense tier: launcher of the dequantization kernel (one instantiation per dtype, bit width,
// zero points and act-order: 16 in all, in this one translation unit).
#include "common/cuda_check.h"
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

int log2_exact(int64_t value) {
  int shift = 0;
  while ((int64_t(1) << shift) < value) ++shift;
  return shift;
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
  params.zero_fold = weight.zero_fold;
  params.perm = weight.perm;
  params.out = scratch;
  params.ld = ld;
  params.n_pad = geo.n_pad;
  params.k = static_cast<int32_t>(geo.k);
  params.k_blocks = static_cast<int32_t>(geo.k_blocks);
  params.n_block_begin = static_cast<int32_t>(row_begin / kTileRows);
  params.n_block_count = static_cast<int32_t>((rows + kTileRows - 1) / kTileRows);
  // Channelwise: group_rows = k_pad (< 2^30), so every row maps to scale row 0 with shift 30.
  params.group_shift = geo.group_size == kChannelwise ? 30 : log2_exact(geo.group_rows);
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
