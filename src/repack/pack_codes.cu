// The code repack kernel: one thread per 32-bit word of the packed codes.
//
// Each thread inverts the packed layout for its word (layout_inverse.h), reads the 8 (int4) or 4
// (int8) source codes through the format's reader and stores the finished word once: no
// read-modify-write, no atomics on the codes, and padding is written with the code bias in the
// same pass, so the destination needs no prior fill. Consecutive threads write consecutive words
// (coalesced stores); a warp's 32 words cover 4 (int4) or 2 (int8) rows by 64 columns of one
// block, so its scattered source reads stay within a few cache lines per row. This runs once at
// load time and is bound by memory traffic either way.
#include "common/cuda_check.h"
#include "repack/launch_config.h"
#include "repack/pack_kernels.h"

namespace sailfish::repack {

namespace {

template <class Source>
__global__ void __launch_bounds__(kThreadsPerBlock)
    pack_codes_kernel(Source src, CodeLayout layout, uint32_t* words, uint32_t* error_flags) {
  const int64_t word = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  uint32_t errors = 0;
  if (word < layout.total_words) words[word] = pack_code_word(src, layout, word, &errors);
  // Threads past the end still vote: the warp is whole (kThreadsPerBlock is a multiple of 32).
  errors = __reduce_or_sync(0xffffffffu, errors);
  if (errors != 0 && threadIdx.x % 32 == 0) atomicOr(error_flags, errors);
}

}  // namespace

template <class Source>
Status launch_pack_codes(const Source& src, const CodeLayout& layout, uint32_t* words,
                         uint32_t* error_flags, cudaStream_t stream) {
  if (layout.total_words <= 0) return Status();
  pack_codes_kernel<Source><<<blocks_for(layout.total_words), kThreadsPerBlock, 0, stream>>>(
      src, layout, words, error_flags);
  SF_CHECK_LAUNCH("pack_codes_kernel launch");
  return Status();
}

template Status launch_pack_codes<CanonicalSource>(const CanonicalSource&, const CodeLayout&,
                                                   uint32_t*, uint32_t*, cudaStream_t);
template Status launch_pack_codes<GptqSource>(const GptqSource&, const CodeLayout&, uint32_t*,
                                              uint32_t*, cudaStream_t);
template Status launch_pack_codes<AwqSource>(const AwqSource&, const CodeLayout&, uint32_t*,
                                             uint32_t*, cudaStream_t);
template Status launch_pack_codes<MatMulNBitsSource>(const MatMulNBitsSource&, const CodeLayout&,
                                                     uint32_t*, uint32_t*, cudaStream_t);

}  // namespace sailfish::repack
