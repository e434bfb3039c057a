// Per-format readers of checkpoint tensors: element (n, k) of the codes and (group, n) of the
// scales and zero points, in the canonical meaning of quantized_weight.h, read straight from the
// source layout. The repack kernels are templates over these, so one kernel serves every format
// and each format's bit fiddling lives in one small struct, next to the importer it mirrors
// (src/importers/*.cpp define the semantics; these must agree with them).
//
// Every reader is a trivially copyable struct of pointers and sizes, passed to kernels by value.
// Methods are host+device and touch only the pointers they are given, so the CPU test runs them
// over host vectors and checks them against the importers without a GPU. Indices are never
// range-checked here: the caller only asks for n < N, k < K, group < groups.
#pragma once

#include <cstdint>

#include "repack/dtype_convert.h"
#include "repack/layout_inverse.h"
#include "sailfish/types.h"

namespace sailfish::repack {

// What the kernels report back through one 32-bit flag word (bits OR-ed together).
enum ErrorFlag : uint32_t {
  kErrorCodeOutOfRange = 1u << 0,  // a canonical code >= 2^bits
  kErrorZeroOutOfRange = 1u << 1,  // a canonical integer zero point >= 2^bits
  kErrorScaleNotFinite = 1u << 2,  // a scale is NaN or infinite
  kErrorZeroNotFinite = 1u << 3,   // a float zero point is NaN or infinite
  kErrorZeroNotBias = 1u << 4,     // GPTQ scan: some zero point differs from the code bias
};

SF_REPACK_HD constexpr uint32_t low_bits_mask(int bits) { return (1u << bits) - 1u; }
SF_REPACK_HD constexpr uint32_t code_bias_of(int bits) { return 1u << (bits - 1); }

// The canonical form itself: codes [n][k] one per byte, scales [groups][n], zero points
// [groups][n] as integer codes or float values.
struct CanonicalSource {
  int64_t n, k;
  int bits;
  const uint8_t* codes;
  ScalarArray scales;
  ZeroPointKind zero_kind;
  const uint8_t* zero_codes;
  ScalarArray zero_values;

  // Unmasked: a byte >= 2^bits is bad input, which the caller detects and reports.
  SF_REPACK_HD uint32_t code(int64_t nn, int64_t kk) const { return codes[nn * k + kk]; }
  SF_REPACK_HD float scale(int64_t g, int64_t nn) const { return scales.load(g * n + nn); }
  SF_REPACK_HD double zero_point(int64_t g, int64_t nn, uint32_t* errors) const {
    if (zero_kind == ZeroPointKind::kInteger) {
      const uint32_t z = zero_codes[g * n + nn];
      if (z > low_bits_mask(bits)) *errors |= kErrorZeroOutOfRange;
      return static_cast<double>(z);
    }
    if (zero_kind == ZeroPointKind::kFloat) {
      const float z = zero_values.load(g * n + nn);
      if (!is_finite_bits(bits_of(z))) *errors |= kErrorZeroNotFinite;
      return static_cast<double>(z);
    }
    return static_cast<double>(code_bias_of(bits));
  }
};

// GPTQ: qweight int32 [k / per_word][n] packed along K; qzeros int32 [groups][n / per_word]
// packed along N; both with the earliest element in the lowest bits. v1 checkpoints store
// zero - 1, wrapping inside the field (src/importers/gptq.cpp).
struct GptqSource {
  int64_t n;
  int bits;
  bool v1_minus_one;
  const int32_t* qweight;
  const int32_t* qzeros;  // may be null when the weight is symmetric (never read then)
  ScalarArray scales;

  SF_REPACK_HD int per_word() const { return 32 / bits; }
  SF_REPACK_HD uint32_t code(int64_t nn, int64_t kk) const {
    const uint32_t word = static_cast<uint32_t>(qweight[(kk / per_word()) * n + nn]);
    return (word >> ((kk % per_word()) * bits)) & low_bits_mask(bits);
  }
  SF_REPACK_HD float scale(int64_t g, int64_t nn) const { return scales.load(g * n + nn); }
  SF_REPACK_HD uint32_t zero_code(int64_t g, int64_t nn) const {
    const int64_t words_per_group = n / per_word();
    const uint32_t word = static_cast<uint32_t>(qzeros[g * words_per_group + nn / per_word()]);
    const uint32_t stored = (word >> ((nn % per_word()) * bits)) & low_bits_mask(bits);
    return v1_minus_one ? (stored + 1u) & low_bits_mask(bits) : stored;
  }
  SF_REPACK_HD double zero_point(int64_t g, int64_t nn, uint32_t* /*errors*/) const {
    return static_cast<double>(zero_code(g, nn));
  }
};

// AWQ (4-bit): qweight int32 [k][n / 8], qzeros int32 [groups][n / 8]; nibble i of word j holds
// column 8j + {0, 2, 4, 6, 1, 3, 5, 7}[i], so column c lives in nibble (c % 2) * 4 + (c % 8) / 2.
struct AwqSource {
  int64_t n;
  const int32_t* qweight;
  const int32_t* qzeros;
  ScalarArray scales;

  SF_REPACK_HD static uint32_t column_of_word(const int32_t* row, int64_t nn) {
    const uint32_t word = static_cast<uint32_t>(row[nn / 8]);
    const int nibble = static_cast<int>((nn % 2) * 4 + (nn % 8) / 2);
    return (word >> (nibble * 4)) & 0xfu;
  }
  SF_REPACK_HD uint32_t code(int64_t nn, int64_t kk) const {
    return column_of_word(qweight + kk * (n / 8), nn);
  }
  SF_REPACK_HD float scale(int64_t g, int64_t nn) const { return scales.load(g * n + nn); }
  SF_REPACK_HD double zero_point(int64_t g, int64_t nn, uint32_t* /*errors*/) const {
    return static_cast<double>(column_of_word(qzeros + g * (n / 8), nn));
  }
};

// ONNX Runtime MatMulNBits: b uint8 [n][k_blocks][blob] with the blobs of a row contiguous, so
// code k of row n is element k of a packed row (earliest in the lowest bits); scales and typed
// zero points [n][k_blocks]; packed zero points uint8 [n][zero_row_bytes], same packing.
struct MatMulNBitsSource {
  int bits;
  int64_t k_blocks;
  int64_t row_bytes;  // k_blocks * blob
  const uint8_t* b;
  ScalarArray scales;
  ZeroPointKind zero_kind;
  const uint8_t* zero_packed;
  int64_t zero_row_bytes;
  ScalarArray zero_typed;

  SF_REPACK_HD static uint32_t packed_get(const uint8_t* row, int64_t index, int bits) {
    if (bits == 8) return row[index];
    return (static_cast<uint32_t>(row[index / 2]) >> ((index % 2) * 4)) & 0xfu;
  }
  SF_REPACK_HD uint32_t code(int64_t nn, int64_t kk) const {
    return packed_get(b + nn * row_bytes, kk, bits);
  }
  SF_REPACK_HD float scale(int64_t g, int64_t nn) const { return scales.load(nn * k_blocks + g); }
  SF_REPACK_HD double zero_point(int64_t g, int64_t nn, uint32_t* errors) const {
    if (zero_kind == ZeroPointKind::kInteger) {
      return static_cast<double>(packed_get(zero_packed + nn * zero_row_bytes, g, bits));
    }
    if (zero_kind == ZeroPointKind::kFloat) {
      const float z = zero_typed.load(nn * k_blocks + g);
      if (!is_finite_bits(bits_of(z))) *errors |= kErrorZeroNotFinite;
      return static_cast<double>(z);
    }
    return static_cast<double>(code_bias_of(bits));
  }
};

}  // namespace sailfish::repack
