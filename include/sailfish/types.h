// Small vocabulary types shared by every part of the public API.
#pragma once

#include <cstdint>

namespace sailfish {

// Element types of activations, scales and outputs.
enum class DType : int { kF16 = 0, kBF16 = 1, kF32 = 2 };
const char* dtype_name(DType dtype);
inline int dtype_bytes(DType dtype) { return dtype == DType::kF32 ? 4 : 2; }

// group_size value for one scale per output column over all of K.
constexpr int kChannelwise = -1;

// How a quantized weight stores its zero points.
//  kNone:    symmetric; the zero point is the code bias 2^(bits-1) (GPTQ u4b8 / u8b128,
//            MatMulNBits without a zero_points input).
//  kInteger: one integer code per (group, column) (AWQ, asymmetric GPTQ, MatMulNBits packed uint8).
//  kFloat:   one floating value per (group, column), possibly fractional (MatMulNBits typed).
enum class ZeroPointKind : int { kNone = 0, kInteger = 1, kFloat = 2 };
const char* zero_point_kind_name(ZeroPointKind kind);

// ceil(a / b) for a >= 0 and b > 0, without forming a + b - 1, which overflows for a near
// INT64_MAX (sizes taken from a caller's attributes before they are checked).
constexpr int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b > 0 ? 1 : 0); }

// Groups along k of a supported group size (kChannelwise: one) for k >= 0: what every importer and
// packer sizes its scale and zero planes by.
constexpr int64_t group_count(int64_t k, int group_size) {
  return group_size == kChannelwise ? 1 : ceil_div(k, group_size);
}

// The code bias of a bit width: the zero point of a symmetric weight, 8 for int4, 128 for int8.
constexpr int code_bias(int bits) { return 1 << (bits - 1); }

}  // namespace sailfish
