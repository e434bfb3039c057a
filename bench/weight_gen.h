// Device kernels that turn random bytes into a valid packed weight (docs/FORMAT.md): random codes
// are already valid (every byte pattern is), so only the metadata and the padding need care.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "sailfish/status.h"
#include "sailfish/types.h"

namespace sailfish::bench {

struct ScaleFill {
  int64_t scale_rows = 0;  // rows of the [scale_rows][n_pad] tensors
  int64_t live_rows = 0;   // scale rows that cover real input rows (the rest are padding)
  int64_t n = 0, n_pad = 0;
  int bits = 4;
  DType dtype = DType::kBF16;
};

// Random scales s = +-(1 + j/8) * 2^-e, j in 0..7, e in 6..8, negative one time in four: small,
// with four significant bits, so exactly representable in bf16 and fp16 and exact when multiplied
// by any int4 code offset. If zero_fold is not null its two planes (docs/FORMAT.md) get a random
// integer zero point zp as the shift and +0.0 as the fold, what the packer writes for an integer
// zero point. Padding rows and columns get 0, as the packer writes them.
Status fill_scales(const ScaleFill& fill, void* scales, void* zero_fold, uint64_t seed,
                   cudaStream_t stream);

// words[index[i]] = (words[index[i]] & keep[i]) | set[i] for i < count (indices unique): writes the
// code bias into the padding nibbles/bytes of a packed code tensor.
Status apply_word_patches(uint32_t* words, const int64_t* index, const uint32_t* keep,
                          const uint32_t* set, int64_t count, cudaStream_t stream);

}  // namespace sailfish::bench
