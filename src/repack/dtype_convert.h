// Float <-> fp16 / bf16 bit conversions usable on the host and the device, bit-identical to
// float_to_bits / bits_to_float of src/format/quantize.cpp (the CPU packer's rounding), including
// subnormals, overflow to infinity and the NaN patterns. The device's own intrinsics are not used
// on purpose: matching the packer byte for byte is the contract, and its NaN payloads and
// rounding code path are ours to pin down. Integer-only, so host and device compute the same bits
// whatever the compiler's floating-point flags. tests/cpu/repack_mapping_test.cpp compares these
// with quantize.cpp over the whole fp16 / bf16 code space and a sweep of float32 bit patterns.
#pragma once

#include <cstdint>

#include "common/float_bits.h"
#include "repack/layout_inverse.h"  // SF_REPACK_HD
#include "sailfish/types.h"

namespace sailfish::repack {

using sailfish::detail::bits_of;
using sailfish::detail::float_of;

SF_REPACK_HD constexpr bool is_finite_bits(uint32_t u) { return (u & 0x7f800000u) != 0x7f800000u; }

// binary32 -> binary16, round to nearest even.
SF_REPACK_HD constexpr uint16_t half_from_float_bits(uint32_t u) {
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t mag = u & 0x7fffffffu;
  if (mag > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN: quiet, no payload
  // 0x477ff000 is 65520, halfway between the largest half (65504) and 2^16: it and everything
  // above (infinity included) rounds to infinity.
  if (mag >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (mag >= 0x38800000u) {  // a normal half: rebias the exponent, round off 13 mantissa bits
    const uint32_t rounded = mag + 0x0fffu + ((mag >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }
  // Below 2^-14 the half is subnormal: its mantissa is round(value * 2^24). With value =
  // m * 2^(e - 150) (m including the hidden bit), that is m shifted right by 126 - e, rounded to
  // nearest even. Shifts of 25 or more leave less than half of the last place: zero. (A float
  // subnormal, e == 0, is far below that.)
  const uint32_t exponent = mag >> 23;
  if (exponent < 102) return static_cast<uint16_t>(sign);
  const uint32_t m = (mag & 0x007fffffu) | 0x00800000u;
  const uint32_t shift = 126u - exponent;  // 14 .. 24
  const uint32_t kept = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  const uint32_t up = (rest > half || (rest == half && (kept & 1u))) ? 1u : 0u;
  return static_cast<uint16_t>(sign | (kept + up));  // may carry into the smallest normal: right
}

// binary32 -> bfloat16, round to nearest even; NaN stays NaN (quiet bit set).
SF_REPACK_HD constexpr uint16_t bf16_from_float_bits(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// binary16 -> binary32 bits (exact).
SF_REPACK_HD constexpr uint32_t float_bits_from_half(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 31) return sign | 0x7f800000u | (mantissa << 13);
  if (exponent != 0) return sign | ((exponent + 112u) << 23) | (mantissa << 13);
  if (mantissa == 0) return sign;
  // Subnormal half mantissa * 2^-24: normalize so the leading one becomes the hidden bit.
  uint32_t e = 113;  // the biased float exponent of 2^-14, lowered once per shift below
  uint32_t m = mantissa;
  while ((m & 0x400u) == 0) {
    m <<= 1;
    --e;
  }
  return sign | (e << 23) | ((m & 0x3ffu) << 13);
}

// The public conversions, for the two packed scale types.
SF_REPACK_HD constexpr uint16_t dtype_bits_from_float_bits(uint32_t u, DType dtype) {
  return dtype == DType::kF16 ? half_from_float_bits(u) : bf16_from_float_bits(u);
}
SF_REPACK_HD constexpr uint32_t float_bits_from_dtype_bits(uint16_t bits, DType dtype) {
  return dtype == DType::kF16 ? float_bits_from_half(bits) : static_cast<uint32_t>(bits) << 16;
}

// A read-only array of fp16, bf16 or fp32 values, read as float32 (exact for all three).
struct ScalarArray {
  const void* data;
  DType dtype;

  SF_REPACK_HD float load(int64_t i) const {
    if (dtype == DType::kF32) return static_cast<const float*>(data)[i];
    const uint16_t bits = static_cast<const uint16_t*>(data)[i];
    return float_of(float_bits_from_dtype_bits(bits, dtype));
  }
};

}  // namespace sailfish::repack
