#include "sailfish/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sailfish {

namespace {

uint32_t float_bits(float value) {
  uint32_t u;
  std::memcpy(&u, &value, sizeof(u));
  return u;
}
float bits_float(uint32_t u) {
  float value;
  std::memcpy(&value, &u, sizeof(value));
  return value;
}

// IEEE binary16 from binary32, round to nearest even, with subnormals, inf and nan.
uint16_t float_to_half_bits(float value) {
  const uint32_t u = float_bits(value);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to inf
  if (abs < 0x38800000u) {                       // below the smallest normal half: subnormal
    // value * 2^24 rounded to nearest even integer is the subnormal mantissa.
    const float scaled = bits_float(abs) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  const uint32_t mantissa_rounded = abs + 0x0fffu + ((abs >> 13) & 1u);  // RNE at bit 13
  return sign | static_cast<uint16_t>((mantissa_rounded - 0x38000000u) >> 13);
}

float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float v = static_cast<float>(mantissa) / 16777216.0f;  // mantissa * 2^-24
    return sign ? -v : v;
  }
  if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint16_t float_to_bf16_bits(float value) {
  const uint32_t u = float_bits(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // nan
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace

uint16_t float_to_bits(float value, DType dtype) {
  return dtype == DType::kF16 ? float_to_half_bits(value) : float_to_bf16_bits(value);
}

float bits_to_float(uint16_t bits, DType dtype) {
  return dtype == DType::kF16 ? half_bits_to_float(bits)
                              : bits_float(static_cast<uint32_t>(bits) << 16);
}

float round_to_dtype(float value, DType dtype) {
  if (dtype == DType::kF32) return value;
  return bits_to_float(float_to_bits(value, dtype), dtype);
}

Status quantize_rtn(const float* weights, int64_t n, int64_t k, const QuantizeOptions& options,
                    QuantizedWeight* out) {
  if (out == nullptr) return invalid_argument("quantize_rtn: out is null");
  if (options.bits != 4 && options.bits != 8) {
    return invalid_argument("quantize_rtn: bits is ", options.bits, "; accepted: 4 or 8");
  }
  if (!is_supported_group_size(options.group_size)) {
    return invalid_argument("quantize_rtn: group_size is ", options.group_size,
                            "; accepted: 16, 32, 64, 128, 256 or -1 (channelwise)");
  }
  if (n <= 0 || k <= 0) {
    return invalid_argument("quantize_rtn: shape [n=", n, ", k=", k, "] must be positive");
  }
  if (weights == nullptr) return invalid_argument("quantize_rtn: weights is null");
  if (options.scheme != QuantScheme::kSymmetric && options.scheme != QuantScheme::kAsymmetric) {
    return invalid_argument("quantize_rtn: scheme is ", int(options.scheme),
                            "; accepted: QuantScheme::kSymmetric or kAsymmetric");
  }
  if (options.scale_dtype != DType::kF32 && options.scale_dtype != DType::kF16 &&
      options.scale_dtype != DType::kBF16) {
    return invalid_argument("quantize_rtn: scale_dtype is ", int(options.scale_dtype),
                            "; accepted: fp32, fp16 or bf16 (the precision scales are rounded to)");
  }
  // n*k sizes the codes and indexes the weights: a product that wraps would size them small and
  // then walk n rows past the end.
  int64_t unused = 0;
  if (__builtin_mul_overflow(n, k, &unused)) {
    return invalid_argument("quantize_rtn: shape [n=", n, ", k=", k,
                            "] is too large (n*k overflows int64); accepted: n*k < 2^63");
  }

  QuantizedWeight w;
  w.n = n;
  w.k = k;
  w.bits = options.bits;
  w.group_size = options.group_size;
  const int64_t gs = w.effective_group_size();
  const int64_t groups = w.num_groups();
  const int max_code = (1 << options.bits) - 1;
  const bool symmetric = options.scheme == QuantScheme::kSymmetric;
  w.zero_kind = symmetric ? ZeroPointKind::kNone : ZeroPointKind::kInteger;
  w.codes.resize(static_cast<size_t>(n * k));
  w.scales.resize(static_cast<size_t>(groups * n));
  if (!symmetric) w.zero_codes.resize(static_cast<size_t>(groups * n));

  for (int64_t nn = 0; nn < n; ++nn) {
    const float* row = weights + nn * k;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t k0 = g * gs, k1 = std::min(k, k0 + gs);
      float lo = 0.0f, hi = 0.0f;  // the range always includes 0
      for (int64_t kk = k0; kk < k1; ++kk) {
        if (!std::isfinite(row[kk])) {
          return invalid_argument("quantize_rtn: weight [", nn, ", ", kk, "] is not finite");
        }
        lo = std::min(lo, row[kk]);
        hi = std::max(hi, row[kk]);
      }
      float scale;
      int zero = code_bias(options.bits);
      if (symmetric) {
        const float amax = std::max(-lo, hi);
        scale = amax / (static_cast<float>(max_code) / 2.0f);
      } else {
        scale = (hi - lo) / static_cast<float>(max_code);
      }
      scale = round_to_dtype(scale, options.scale_dtype);
      // A finite range can still need a scale the type cannot hold (fp16 above 65504, or hi - lo
      // beyond float): an infinite scale makes a weight that validate() refuses and that
      // dequantizes to NaN, so say so here instead of returning it.
      if (!std::isfinite(scale)) {
        return invalid_argument("quantize_rtn: weights [", nn, ", ", k0, "..", k1 - 1,
                                "] span [", lo, ", ", hi, "], whose ", options.bits,
                                "-bit scale overflows ", dtype_name(options.scale_dtype),
                                "; accepted: a range whose scale is finite in ",
                                dtype_name(options.scale_dtype));
      }
      if (scale == 0.0f) scale = round_to_dtype(1e-8f, options.scale_dtype);
      if (scale == 0.0f) scale = 1.0f;
      if (!symmetric) {
        zero = static_cast<int>(std::clamp(std::round(-lo / scale), 0.0f,
                                           static_cast<float>(max_code)));
        w.zero_codes[static_cast<size_t>(g * n + nn)] = static_cast<uint8_t>(zero);
      }
      w.scales[static_cast<size_t>(g * n + nn)] = scale;
      for (int64_t kk = k0; kk < k1; ++kk) {
        const float q = std::round(row[kk] / scale) + static_cast<float>(zero);
        w.codes[static_cast<size_t>(nn * k + kk)] =
            static_cast<uint8_t>(std::clamp(q, 0.0f, static_cast<float>(max_code)));
      }
    }
  }
  *out = std::move(w);
  return Status();
}

}  // namespace sailfish
