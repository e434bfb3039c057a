// The canonical host form of a quantized weight, the one every importer produces and every
// exporter and the packer consume. It is plain and unpermuted:
//
//   W[n][k] = (codes[n][k] - zp(g, n)) * scales[g][n],   g = g_idx.empty() ? k / group_size
//                                                                            : g_idx[k]
//
// zp(g, n) is code_bias(bits) for ZeroPointKind::kNone, zero_codes[g][n] for kInteger and
// zero_values[g][n] for kFloat. Scales are float32 and hold the exact source values (fp16 and bf16
// scales convert to float32 exactly).
#pragma once

#include <cstdint>
#include <vector>

#include "sailfish/status.h"
#include "sailfish/types.h"

namespace sailfish {

struct QuantizedWeight {
  int64_t n = 0;               // output features (rows of W)
  int64_t k = 0;               // input features (columns of W)
  int bits = 4;                // 4 or 8
  int group_size = 128;        // 16, 32, 64, 128, 256 or kChannelwise
  std::vector<uint8_t> codes;  // [n][k], each < 2^bits
  std::vector<float> scales;   // [num_groups()][n]
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  std::vector<uint8_t> zero_codes;  // [num_groups()][n] when kInteger, each < 2^bits
  std::vector<float> zero_values;   // [num_groups()][n] when kFloat
  std::vector<int32_t> g_idx;       // [k] group of each input row (act-order), or empty

  // ceil(k / group_size); 1 for channelwise.
  int64_t num_groups() const;
  // The effective group size: group_size, or k for channelwise.
  int64_t effective_group_size() const;
  int64_t group_of(int64_t kk) const {
    return g_idx.empty() ? kk / effective_group_size() : g_idx[static_cast<size_t>(kk)];
  }
  double zero_point(int64_t g, int64_t nn) const;
  // (q - zp) * s, in double.
  double dequantized(int64_t nn, int64_t kk) const;
};

// Checks every invariant above: sizes, bit width, group size, code and zero ranges, g_idx range.
// For act-order it also requires the GPTQ balance rule: group g holds exactly
// min(group_size, k - g * group_size) rows, which is what lets the packer sort rows into groups.
Status validate(const QuantizedWeight& w);

bool operator==(const QuantizedWeight& a, const QuantizedWeight& b);
inline bool operator!=(const QuantizedWeight& a, const QuantizedWeight& b) { return !(a == b); }

// Accepted group sizes: 16, 32, 64, 128, 256 and kChannelwise.
bool is_supported_group_size(int group_size);

}  // namespace sailfish
