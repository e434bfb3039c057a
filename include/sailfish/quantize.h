// Round-to-nearest quantizers from float weights, for tests, benchmarks and users without a
// calibrated checkpoint.
#pragma once

#include <cstdint>

#include "sailfish/quantized_weight.h"

namespace sailfish {

// max and min are a group's, with 0 included (an all-positive group still has min = 0), so 0 is
// always exactly representable.
enum class QuantScheme {
  // GPTQ-style symmetric: s = max|w| / ((2^bits - 1) / 2), q = clamp(round(w / s) + 2^(bits-1)),
  // zero point = 2^(bits-1) (u4b8 / u8b128). ZeroPointKind::kNone.
  kSymmetric,
  // AWQ-style asymmetric: s = (max - min) / (2^bits - 1), zp = clamp(round(-min / s)),
  // q = clamp(round(w / s) + zp). ZeroPointKind::kInteger.
  kAsymmetric,
};

struct QuantizeOptions {
  int bits = 4;
  int group_size = 128;  // or kChannelwise
  QuantScheme scheme = QuantScheme::kSymmetric;
  // Scales are rounded to this type so that a packed weight holds them exactly (kF32 keeps them).
  DType scale_dtype = DType::kBF16;
};

// weights: [n][k] row-major float32. Rounds half away from zero.
Status quantize_rtn(const float* weights, int64_t n, int64_t k, const QuantizeOptions& options,
                    QuantizedWeight* out);

// Float conversions used to make host values exactly representable in a device type.
uint16_t float_to_bits(float value, DType dtype);  // round to nearest even; dtype kF16 or kBF16
float bits_to_float(uint16_t bits, DType dtype);
float round_to_dtype(float value, DType dtype);  // identity for kF32

}  // namespace sailfish
