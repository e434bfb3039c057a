// The counter-based generator shared by the device fill kernels and the host seed derivation:
// the splitmix64 finalizer applied to (seed, index). Cheap, stateless and well mixed, which is
// all that benchmark data needs.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SF_BENCH_HD __host__ __device__ __forceinline__
#else
#define SF_BENCH_HD inline
#endif

namespace sailfish::bench {

SF_BENCH_HD uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

SF_BENCH_HD uint64_t hash_at(uint64_t seed, uint64_t index) { return mix64(seed ^ mix64(index)); }

}  // namespace sailfish::bench
