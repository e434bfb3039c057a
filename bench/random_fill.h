// Device-side random data. Every value is a pure function of (seed, element index), so a buffer
// is reproducible from its seed whatever the launch configuration. Never zeros: power draw and
// hence clocks depend on the bits a GEMM moves, so timing on zeros flatters every kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "sailfish/status.h"
#include "sailfish/types.h"

namespace sailfish::bench {

// Uniform random bytes. dst must be 16-byte aligned.
Status fill_random_bytes(void* dst, size_t bytes, uint64_t seed, cudaStream_t stream);

// count values of dtype (fp16 or bf16), uniform in [-amplitude, amplitude) rounded to nearest.
Status fill_random_values(void* dst, int64_t count, DType dtype, float amplitude, uint64_t seed,
                          cudaStream_t stream);

// A seed derived from a base seed and a few small integers (shape, copy, role...).
uint64_t derive_seed(uint64_t base, uint64_t a, uint64_t b = 0, uint64_t c = 0);

}  // namespace sailfish::bench
