// The metadata repack kernel: one thread per [scale_rows][n_pad] entry writes the scale, rounded
// to the packed dtype, and with zero points the zero shift and fold, in the two planes of
// zero_fold (pack_element.h says how). Padding entries get +0.0. Scales are tiny next to the
// codes; this kernel only has to be exact.
#include "common/cuda_check.h"
#include "repack/launch_config.h"
#include "repack/pack_kernels.h"

namespace sailfish::repack {

namespace {

template <class Source>
__global__ void __launch_bounds__(kThreadsPerBlock)
    pack_metadata_kernel(Source src, MetaLayout layout, uint16_t* scales, uint16_t* zero_fold,
                         uint32_t* error_flags) {
  const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  uint32_t errors = 0;
  if (index < layout.total_entries) {
    const MetaEntry entry = pack_meta_entry(src, layout, index, &errors);
    scales[index] = entry.scale;
    if (layout.has_zero) {
      zero_fold[index] = entry.zero_shift;
      zero_fold[layout.total_entries + index] = entry.zero_fold;
    }
  }
  errors = __reduce_or_sync(0xffffffffu, errors);  // whole warps: see launch_config.h
  if (errors != 0 && threadIdx.x % 32 == 0) atomicOr(error_flags, errors);
}

}  // namespace

template <class Source>
Status launch_pack_metadata(const Source& src, const MetaLayout& layout, uint16_t* scales,
                            uint16_t* zero_fold, uint32_t* error_flags, cudaStream_t stream) {
  if (layout.has_zero && zero_fold == nullptr) {
    return internal_error("launch_pack_metadata: zero points but no zero_fold buffer");
  }
  if (layout.total_entries <= 0) return Status();
  pack_metadata_kernel<Source><<<blocks_for(layout.total_entries), kThreadsPerBlock, 0, stream>>>(
      src, layout, scales, zero_fold, error_flags);
  SF_CHECK_LAUNCH("pack_metadata_kernel launch");
  return Status();
}

template Status launch_pack_metadata<CanonicalSource>(const CanonicalSource&, const MetaLayout&,
                                                      uint16_t*, uint16_t*, uint32_t*,
                                                      cudaStream_t);
template Status launch_pack_metadata<GptqSource>(const GptqSource&, const MetaLayout&, uint16_t*,
                                                 uint16_t*, uint32_t*, cudaStream_t);
template Status launch_pack_metadata<AwqSource>(const AwqSource&, const MetaLayout&, uint16_t*,
                                                uint16_t*, uint32_t*, cudaStream_t);
template Status launch_pack_metadata<MatMulNBitsSource>(const MatMulNBitsSource&,
                                                        const MetaLayout&, uint16_t*, uint16_t*,
                                                        uint32_t*, cudaStream_t);

}  // namespace sailfish::repack
