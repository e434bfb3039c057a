// GPTQ checkpoints write qzeros even when symmetric, every field holding the code bias (after the
// v1 minus-one convention). import_gptq keeps those on the symmetric path (ZeroPointKind::kNone,
// no zero folds), so the repack must know before it allocates the destination: this kernel tells
// by scanning the groups x n zero points once, one thread each.
#include "common/cuda_check.h"
#include "repack/launch_config.h"
#include "repack/pack_kernels.h"

namespace sailfish::repack {

namespace {

__global__ void __launch_bounds__(kThreadsPerBlock)
    gptq_zero_scan_kernel(GptqSource src, int64_t total, uint32_t* error_flags) {
  const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  bool differs = false;
  if (index < total) {
    differs = src.zero_code(index / src.n, index % src.n) != code_bias_of(src.bits);
  }
  // One atomic per warp at most: an asymmetric weight differs almost everywhere.
  if (__any_sync(0xffffffffu, differs) && threadIdx.x % 32 == 0) {
    atomicOr(error_flags, static_cast<uint32_t>(kErrorZeroNotBias));
  }
}

}  // namespace

Status launch_gptq_zero_scan(const GptqSource& src, int64_t groups, uint32_t* error_flags,
                             cudaStream_t stream) {
  const int64_t total = groups * src.n;
  if (total <= 0) return Status();
  gptq_zero_scan_kernel<<<blocks_for(total), kThreadsPerBlock, 0, stream>>>(src, total,
                                                                             error_flags);
  SF_CHECK_LAUNCH("gptq_zero_scan_kernel launch");
  return Status();
}

}  // namespace sailfish::repack
