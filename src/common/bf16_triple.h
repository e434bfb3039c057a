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

#include "common/float_bits.h"
#include "common/host_device.h"

namespace sailfish::detail {

struct Bf16Triple {
  uint32_t b0;  // {hi in bits 0-15, mid in bits 16-31}
  uint32_t b1;  // {lo in bits 0-15, 0}
};

// Exact for every finite x whose pieces stay normal (|x| >= 2^-110 or so); subnormal pieces may
// be flushed by the mma, which no correction of a real group comes near.
SF_HOST_DEVICE inline Bf16Triple split_into_bf16_triple(float x) {
  const uint32_t x_bits = bits_of(x);
  const float rest = x - float_of(x_bits & 0xffff0000u);
  const uint32_t rest_bits = bits_of(rest);
  const float last = rest - float_of(rest_bits & 0xffff0000u);
#ifdef __CUDA_ARCH__
  // One PRMT (the SASS measured in docs/perf/decode.md, v54; the shift-or form compiles to LEA.HI).
  const uint32_t b0 = __byte_perm(x_bits, rest_bits, 0x7632u);
#else
  const uint32_t b0 = (x_bits >> 16) | (rest_bits & 0xffff0000u);
#endif
  return {b0, bits_of(last) >> 16};
}

}  // namespace sailfish::detail
