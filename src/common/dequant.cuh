// Code -> (q - code_bias) conversion in registers, shared by every tier.
//
// A packed 32-bit word (docs/FORMAT.md) turns into tensor-core register pairs with no shuffles:
// the "magic number" idiom ORs a code into the low mantissa bits of a power of two whose
// mantissa step is 1, then one packed subtraction removes the power of two and the code bias
// together. Every result is an exact small integer, so the conversion adds no rounding; scales
// (and zero folds) are applied afterwards with one packed multiply (or fused multiply-add).
//
//   fp16 int4: 0x6400 = 1024.0 (10 mantissa bits): 0x6400 | q = 1024 + q; minus 1032 = q - 8,
//              and for a code 4 bits up (bits 4-7 of a half), 0x5400 = 64.0 with mantissa step
//              1/16: 0x5400 | (q << 4) = 64 + q; minus 72 = q - 8. So two of a word's four
//              nibble positions need no shift (one shift a word, where bf16 needs three).
//   bf16 int4: 0x4300 =  128.0 ( 7 mantissa bits): 0x4300 | q =  128 + q; minus  136 = q - 8
//   fp16 int8: 0x6400 | byte = 1024 + b; minus 1152 = b - 128
//   bf16 int8: 7 mantissa bits cannot hold a byte, so each byte b = lo7 + 128 top is taken in two
//              parts, neither shifted: 0x4300 | lo7 = 128 + lo7, and its top bit, which sits on
//              the exponent's lowest bit: (~b & 0x80) | 0xc300 = -256 + 128 top (that exponent
//              bit set doubles 0xc300 = -128); their sum is b - 128, exact, in one packed add.
//              (The zero-point path still goes through fp32: 0x4b000000 = 2^23 (step 1),
//              0x4b000000 | b = 2^23 + b; minus (2^23 + shift), then an exact conversion.)
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace sailfish::gpu {

template <typename T>
struct PairOf;
template <>
struct PairOf<__half> {
  using type = __half2;
};
template <>
struct PairOf<__nv_bfloat16> {
  using type = __nv_bfloat162;
};
template <typename T>
using Pair = typename PairOf<T>::type;

// (a & b) | c in one instruction (LOP3 immediate 0xea).
__device__ __forceinline__ uint32_t and_or(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// (~a & b) | c in one instruction (LOP3 immediate 0xae).
__device__ __forceinline__ uint32_t and_not_or(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xae;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

__device__ __forceinline__ uint32_t byte_perm(uint32_t a, uint32_t b, uint32_t selector) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(selector));
  return d;
}

// The 32 bits of a register pair, as mma operands take them.
template <typename P>
__device__ __forceinline__ uint32_t pair_bits(P pair) {
  return *reinterpret_cast<const uint32_t*>(&pair);
}

template <typename P>
__device__ __forceinline__ P bits_as_pair(uint32_t bits) {
  return *reinterpret_cast<const P*>(&bits);
}

// int4: the four register pairs of one word, in fragment order:
//   out[0] = {(k0, c), (k1, c)}     out[1] = {(k8, c), (k9, c)}
//   out[2] = {(k0, c+8), (k1, c+8)} out[3] = {(k8, c+8), (k9, c+8)}
// each element q - 8, exact.
template <typename T>
__device__ __forceinline__ void int4_word_to_pairs(uint32_t q, Pair<T> out[4]);

template <>
__device__ __forceinline__ void int4_word_to_pairs<__half>(uint32_t q, __half2 out[4]) {
  const __half2 low_bias = bits_as_pair<__half2>(0x64086408u);   // {1032, 1032}
  const __half2 high_bias = bits_as_pair<__half2>(0x54805480u);  // {72, 72}
  const uint32_t q8 = q >> 8;
  out[0] = __hsub2(bits_as_pair<__half2>(and_or(q, 0x000f000fu, 0x64006400u)), low_bias);
  out[1] = __hsub2(bits_as_pair<__half2>(and_or(q, 0x00f000f0u, 0x54005400u)), high_bias);
  out[2] = __hsub2(bits_as_pair<__half2>(and_or(q8, 0x000f000fu, 0x64006400u)), low_bias);
  out[3] = __hsub2(bits_as_pair<__half2>(and_or(q8, 0x00f000f0u, 0x54005400u)), high_bias);
}

template <>
__device__ __forceinline__ void int4_word_to_pairs<__nv_bfloat16>(uint32_t q,
                                                                   __nv_bfloat162 out[4]) {
  const __nv_bfloat162 bias = bits_as_pair<__nv_bfloat162>(0x43084308u);  // {136, 136}
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    out[r] = __hsub2(bits_as_pair<__nv_bfloat162>(and_or(q >> (4 * r), 0x000f000fu, 0x43004300u)),
                     bias);
  }
}

// int4 without the subtraction: the same four pairs, each element (magic + q) = (q - 8) + offset,
// exact, with offset = 136 (bf16) or, for fp16, 1032 in the k 0-7 pairs (out[0], out[2]) and 72 in
// the k 8-15 pairs (out[1], out[3]); OffsetForm below. A caller that accumulates in fp32 can take
// the offsets times the activations off once per k16 slice (decode: one mma of the activations
// against a constant) instead of four packed subtractions per word. The subtraction then happens
// in fp32, on sums larger than the exact ones by offset * sum(a); its rounding stays far below the
// 16-bit rounding of the result (the GPU tests hold it to the 2x rule, docs/perf/decode.md v5).
template <typename T>
__device__ __forceinline__ void int4_word_to_offset_pairs(uint32_t q, Pair<T> out[4]) {
  if constexpr (std::is_same_v<T, __half>) {
    const uint32_t q8 = q >> 8;
    out[0] = bits_as_pair<__half2>(and_or(q, 0x000f000fu, 0x64006400u));
    out[1] = bits_as_pair<__half2>(and_or(q, 0x00f000f0u, 0x54005400u));
    out[2] = bits_as_pair<__half2>(and_or(q8, 0x000f000fu, 0x64006400u));
    out[3] = bits_as_pair<__half2>(and_or(q8, 0x00f000f0u, 0x54005400u));
  } else {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      out[r] = bits_as_pair<Pair<T>>(and_or(q >> (4 * r), 0x000f000fu, 0x43004300u));
    }
  }
}

// int8: the two register pairs of one word (one column), bytes k0 k8 k1 k9:
//   out[0] = {k0, k1}   out[1] = {k8, k9}, each element b - 128, exact.
template <typename T>
__device__ __forceinline__ void int8_word_to_pairs(uint32_t q, Pair<T> out[2]);

template <>
__device__ __forceinline__ void int8_word_to_pairs<__half>(uint32_t q, __half2 out[2]) {
  const __half2 bias = bits_as_pair<__half2>(0x64806480u);  // {1152, 1152}
  // prmt selector nibbles pick result bytes from {q (0-3), 0x64646464 (4-7)}.
  out[0] = __hsub2(bits_as_pair<__half2>(byte_perm(q, 0x64646464u, 0x4240u)), bias);
  out[1] = __hsub2(bits_as_pair<__half2>(byte_perm(q, 0x64646464u, 0x4341u)), bias);
}

// bf16: the byte's seven low bits and its top bit as two exact bf16 (the header above), one shift
// a word to bring k8, k9 (bytes 1 and 3) where k0, k1 sit: a shift, four LOP3 and two packed adds
// a word, against four PRMT, four FADD and two conversions through fp32 before.
template <>
__device__ __forceinline__ void int8_word_to_pairs<__nv_bfloat16>(uint32_t q,
                                                                   __nv_bfloat162 out[2]) {
  const uint32_t q8 = q >> 8;  // bytes k8 and k9 into the places of k0 and k1
  auto pair = [](uint32_t w) {
    // {128 + lo7, 128 + lo7'} + {-256 + 128 top, -256 + 128 top'}: the exact sum b - 128 is a
    // bf16 (|b - 128| <= 128), so the packed add does not round it.
    return __hadd2(bits_as_pair<__nv_bfloat162>(and_or(w, 0x007f007fu, 0x43004300u)),
                   bits_as_pair<__nv_bfloat162>(and_not_or(w, 0x00800080u, 0xc300c300u)));
  };
  out[0] = pair(q);
  out[1] = pair(q8);
}

// int8 without the subtraction, for callers that take offset * sum(a) off in fp32 (see
// int4_word_to_offset_pairs).
//   fp16: the two pairs of int8_word_to_pairs, each element 1024 + b = (b - 128) + 1152.
//   bf16: 7 mantissa bits cannot hold 128 + b, so each byte b = lo7 + 128 top splits into two
//         pairs that both meet the activations as they are: low[0] = {128 + lo7(k0),
//         128 + lo7(k1)} (0x4300 | lo7) and high[0] = {128 + 128 top(k0), ...} (0x4300 with the
//         top bit left in place, on the exponent's lowest bit: 0x4380 = 256), [1] the same for
//         k8, k9. So
//         sum (128 + lo7) a + (128 + 128 top) a = sum (b - 128) a + 384 sum a,
//         for one shift and four LOP3 a word. Until v55 the split was into nibbles (b = lo + 16 hi,
//         offset 2304): three shifts a word, and the high nibbles met activations times 16, four
//         more packed multiplies a k32 (docs/perf/decode.md, v55).
__device__ __forceinline__ void int8_word_to_offset_pairs(uint32_t q, __half2 out[2]) {
  out[0] = bits_as_pair<__half2>(byte_perm(q, 0x64646464u, 0x4240u));
  out[1] = bits_as_pair<__half2>(byte_perm(q, 0x64646464u, 0x4341u));
}
__device__ __forceinline__ void int8_word_to_split_pairs(uint32_t q, __nv_bfloat162 low[2],
                                                         __nv_bfloat162 high[2]) {
  // Bytes k0 k8 k1 k9: the (k0, k1) pair sits in bits 0-7 and 16-23, (k8, k9) in 8-15 and 24-31.
  const uint32_t q8 = q >> 8;
  low[0] = bits_as_pair<__nv_bfloat162>(and_or(q, 0x007f007fu, 0x43004300u));
  high[0] = bits_as_pair<__nv_bfloat162>(and_or(q, 0x00800080u, 0x43004300u));
  low[1] = bits_as_pair<__nv_bfloat162>(and_or(q8, 0x007f007fu, 0x43004300u));
  high[1] = bits_as_pair<__nv_bfloat162>(and_or(q8, 0x00800080u, 0x43004300u));
}

// The offset forms (int4_word_to_offset_pairs, int8_word_to_offset_pairs,
// int8_word_to_split_pairs) as numbers: each element of a fragment's k 0-7 registers is
// (q - kBias) + kLowOffset, of its k 8-15 registers (q - kBias) + kHighOffset. A caller corrects
// with an mma of the activations against {-kUnit, -kUnit} (kNegativeUnitPair, register bits),
// which gives -kUnit * sum(a) over each half of a slice. Where the two offsets are equal kUnit is
// that offset, so the correction is added as it is; fp16 int4 has kUnit 1 and the caller weights
// the two halves' sums by their offsets.
template <typename T, int kBits>
struct OffsetForm {
  static constexpr bool kHalf = std::is_same_v<T, __half>;
  static constexpr float kBias = kBits == 4 ? 8.0f : 128.0f;
  static constexpr float kLowOffset =
      kHalf ? (kBits == 4 ? 1032.0f : 1152.0f) : (kBits == 4 ? 136.0f : 384.0f);
  static constexpr float kHighOffset = kHalf && kBits == 4 ? 72.0f : kLowOffset;
  static constexpr bool kSplitOffsets = kLowOffset != kHighOffset;
  static constexpr float kUnit = kSplitOffsets ? 1.0f : kLowOffset;
  // -1 (fp16 int4); -1152 (fp16 int8); -136 (bf16 int4); -384 (bf16 int8).
  static constexpr uint32_t kNegativeUnitPair =
      kSplitOffsets ? 0xBC00BC00u
                    : (kHalf ? 0xE480E480u : (kBits == 4 ? 0xC308C308u : 0xC3C0C3C0u));
};

// Zero points in the offset form. A column's weights are (q - shift) * s + fold (docs/FORMAT.md),
// so over one scale group
//   sum w a = s * sum (q - bias) a + (s * (bias - shift) + fold) * sum(a),
// and since the correction mma gives -unit * sum(a) (OffsetForm), the second term is that times
//   (s * (shift - bias) - fold) / unit,
// the coefficient returned here, formed in fp32 once per column and group. The group flush then
// adds it times the correction: one fp32 multiply-add per output and group replaces the
// subtraction and the scale-and-fold hfma2 of every weight pair. Every term is exact in fp32 but
// the difference and the product with 1 / unit (two roundings of 2^-24), so the weights are used
// unrounded where the per-pair path rounds each one to 16 bits.
template <typename T, int kBits>
__device__ __forceinline__ float offset_zero_coefficient(float scale, uint32_t shift, T fold) {
  using Form = OffsetForm<T, kBits>;
  constexpr float kInverseUnit = 1.0f / Form::kUnit;
  return (scale * (static_cast<float>(shift) - Form::kBias) - static_cast<float>(fold)) *
         kInverseUnit;
}

// Zero points (docs/FORMAT.md): the code minus the zero point's integer part, `shift`, exact,
// then (q - shift) * s + fold with one hfma2 as before. The subtraction replaces the code-bias
// subtraction of the conversions above, so it costs nothing per weight; where the caller reads a
// column's scale it also turns the stored shift (an integer below 2^bits) into the subtrahend,
// one integer multiply-add: {magic + shift, magic + shift} as register bits, or for bf16 int8,
// whose bytes go through fp32, the fp32 2^23 + shift. The per-pair paths use it (prefill, dense,
// decode at 3-4 token tiles and the strip kernel); the decode warp split at 1-2 token tiles takes
// zero points in the offset form instead (offset_zero_coefficient above).
template <typename T, int kBits>
__device__ __forceinline__ uint32_t zero_subtrahend(uint32_t shift) {
  if constexpr (std::is_same_v<T, __nv_bfloat16> && kBits == 8) {
    return 0x4b000000u | shift;
  } else {
    constexpr uint32_t magic = std::is_same_v<T, __half> ? 0x64006400u : 0x43004300u;
    // No carry out of the mantissa: fp16 has 10 bits for shifts below 256, bf16 (int4 only here)
    // 7 bits for shifts below 16.
    return shift * 0x00010001u + magic;
  }
}

// int4_word_to_pairs with the shifts of columns c (subtrahend `sub`, out[0], out[1]) and c + 8
// (`sub8`, out[2], out[3]) in place of the code bias: each element q - shift, exact.
// kOneShift (fp16; bf16 ignores it): the one-shift conversion of int4_word_to_pairs<__half>, whose
// k 8-15 subtrahends cost an integer multiply-add each per call. It pays where a caller forms its
// subtrahends per word anyway (prefill: 0.95-1.01x the time at M = 512 and 2048, the ALU pipe
// sheds two shifts a word), and loses where they are hoisted over a block and hold registers
// (decode at 3-4 token tiles: up to 1.22x at M = 32); docs/perf/decode.md, v17.
template <typename T, bool kOneShift = false>
__device__ __forceinline__ void int4_word_to_shifted_pairs(uint32_t q, uint32_t sub, uint32_t sub8,
                                                           Pair<T> out[4]) {
  if constexpr (std::is_same_v<T, __half> && kOneShift) {
    // One shift, as int4_word_to_pairs<__half>: the k 8-15 pairs take their nibble 4 bits up
    // under 0x5400, so their subtrahend is 64 + shift, 0x5400 + 16 shift a half. From
    // sub = 0x64006400 + shift * 0x00010001 that is one integer multiply-add (the FMA pipe; the
    // shifts it replaces are ALU work, the busier pipe): sub * 16 + 0x13fa1400 mod 2^32, where
    // 0x13fa1400 = 0x54005400 - 16 * 0x64006400 mod 2^32 and 16 * shift * 0x00010001 carries
    // nothing across the halves (shift < 16).
    constexpr uint32_t kHighFromLow = 0x13fa1400u;
    const uint32_t high_sub = sub * 16u + kHighFromLow;
    const uint32_t high_sub8 = sub8 * 16u + kHighFromLow;
    const uint32_t q8 = q >> 8;
    out[0] = __hsub2(bits_as_pair<__half2>(and_or(q, 0x000f000fu, 0x64006400u)),
                     bits_as_pair<__half2>(sub));
    out[1] = __hsub2(bits_as_pair<__half2>(and_or(q, 0x00f000f0u, 0x54005400u)),
                     bits_as_pair<__half2>(high_sub));
    out[2] = __hsub2(bits_as_pair<__half2>(and_or(q8, 0x000f000fu, 0x64006400u)),
                     bits_as_pair<__half2>(sub8));
    out[3] = __hsub2(bits_as_pair<__half2>(and_or(q8, 0x00f000f0u, 0x54005400u)),
                     bits_as_pair<__half2>(high_sub8));
  } else {
    constexpr uint32_t magic = std::is_same_v<T, __half> ? 0x64006400u : 0x43004300u;
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      out[r] = __hsub2(bits_as_pair<Pair<T>>(and_or(q >> (4 * r), 0x000f000fu, magic)),
                       bits_as_pair<Pair<T>>(r < 2 ? sub : sub8));
    }
  }
}

// int8_word_to_pairs with the shift of the word's column (subtrahend `sub`) in place of the code
// bias: each element b - shift, exact (|b - shift| <= 255 fits fp16 and bf16).
template <typename T>
__device__ __forceinline__ void int8_word_to_shifted_pairs(uint32_t q, uint32_t sub,
                                                           Pair<T> out[2]);

template <>
__device__ __forceinline__ void int8_word_to_shifted_pairs<__half>(uint32_t q, uint32_t sub,
                                                                   __half2 out[2]) {
  const __half2 subtrahend = bits_as_pair<__half2>(sub);
  out[0] = __hsub2(bits_as_pair<__half2>(byte_perm(q, 0x64646464u, 0x4240u)), subtrahend);
  out[1] = __hsub2(bits_as_pair<__half2>(byte_perm(q, 0x64646464u, 0x4341u)), subtrahend);
}

template <>
__device__ __forceinline__ void int8_word_to_shifted_pairs<__nv_bfloat16>(uint32_t q, uint32_t sub,
                                                                          __nv_bfloat162 out[2]) {
  const float subtrahend = __uint_as_float(sub);
  auto lane = [&](uint32_t selector) {
    return __uint_as_float(byte_perm(q, 0x4b000000u, selector)) - subtrahend;
  };
  out[0] = __floats2bfloat162_rn(lane(0x7440u), lane(0x7442u));
  out[1] = __floats2bfloat162_rn(lane(0x7441u), lane(0x7443u));
}

}  // namespace sailfish::gpu
