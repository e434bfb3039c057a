// An fp32 value as three bf16 that add up to it exactly, packed as the B fragment registers of an
// mma.sync m16n8k16 with bf16 operands: the decode flush adds each token's offset correction to
// its sums with one such mma against ones (decode/warp_split_flush.cuh), which must not round the
// correction: it is the offset times the group's activation sum (dequant.cuh: OffsetForm), tens of
// times the group's true sum, so a rounding of it is that many times larger in the result.
//
// hi and mid are the top 16 bits of x and of what hi leaves: truncation, so both subtractions
// are exact. What mid leaves has at most 8 significant bits (x has 24, hi and mid take 8 each), so
// it is a bf16 too. Two bf16 rounded to nearest would leave ~2^-17 of x.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/host_device.h"

namespace sailfish::detail {

struct Bf16Triple {
  uint32_t b0;  // {hi in bits 0-15, mid in bits 16-31}
  uint32_t b1;  // {lo in bits 0-15, 0}
};

SF_HOST_DEVICE inline uint32_t bits_of_float(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x);
#else
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

SF_HOST_DEVICE inline float float_of_bits(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

// Exact for every finite x whose pieces stay normal (|x| >= 2^-110 or so); subnormal pieces may
// be flushed by the mma, which no correction of a real group comes near.
SF_HOST_DEVICE inline Bf16Triple split_into_bf16_triple(float x) {
  const uint32_t x_bits = bits_of_float(x);
  const float rest = x - float_of_bits(x_bits & 0xffff0000u);
  const uint32_t rest_bits = bits_of_float(rest);
  const float last = rest - float_of_bits(rest_bits & 0xffff0000u);
#ifdef __CUDA_ARCH__
  // One PRMT (the SASS measured in docs/perf/decode.md, v54; the shift-or form compiles to LEA.HI).
  const uint32_t b0 = __byte_perm(x_bits, rest_bits, 0x7632u);
#else
  const uint32_t b0 = (x_bits >> 16) | (rest_bits & 0xffff0000u);
#endif
  return {b0, bits_of_float(last) >> 16};
}

}  // namespace sailfish::detail
