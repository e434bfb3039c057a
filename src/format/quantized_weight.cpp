#include "sailfish/quantized_weight.h"

#include <algorithm>
#include <cmath>

namespace sailfish {

bool is_supported_group_size(int group_size) {
  switch (group_size) {
    case 16: case 32: case 64: case 128: case 256: case kChannelwise: return true;
    default: return false;
  }
}

int64_t QuantizedWeight::effective_group_size() const {
  return group_size == kChannelwise ? k : group_size;
}

int64_t QuantizedWeight::num_groups() const {
  if (group_size == kChannelwise) return 1;
  if (group_size <= 0) return 0;
  return ceil_div(k, group_size);
}

double QuantizedWeight::zero_point(int64_t g, int64_t nn) const {
  const size_t i = static_cast<size_t>(g * n + nn);
  switch (zero_kind) {
    case ZeroPointKind::kNone: return code_bias(bits);
    case ZeroPointKind::kInteger: return zero_codes[i];
    case ZeroPointKind::kFloat: return zero_values[i];
  }
  return code_bias(bits);
}

double QuantizedWeight::dequantized(int64_t nn, int64_t kk) const {
  const int64_t g = group_of(kk);
  const double q = codes[static_cast<size_t>(nn * k + kk)];
  return (q - zero_point(g, nn)) * static_cast<double>(scales[static_cast<size_t>(g * n + nn)]);
}

Status validate(const QuantizedWeight& w) {
  if (w.bits != 4 && w.bits != 8) {
    return invalid_argument("bits is ", w.bits, "; accepted: 4 or 8");
  }
  if (w.n <= 0 || w.k <= 0) {
    return invalid_argument("weight shape is [n=", w.n, ", k=", w.k, "]; both must be positive");
  }
  if (!is_supported_group_size(w.group_size)) {
    return invalid_argument("group_size is ", w.group_size,
                            "; accepted: 16, 32, 64, 128, 256 or -1 (channelwise)");
  }
  // n*k must fit before it sizes anything: a product that wraps can equal the size of the codes
  // given (n = 2^62 + 1, k = 64 wraps to 64), and everything that trusts validate() would then walk
  // n rows of them. groups*n needs no check: groups <= k.
  int64_t nk_elements = 0;
  if (__builtin_mul_overflow(w.n, w.k, &nk_elements)) {
    return invalid_argument("weight shape [n=", w.n, ", k=", w.k,
                            "] is too large (n*k overflows int64); accepted: n*k < 2^63");
  }
  const size_t nk = static_cast<size_t>(nk_elements);
  if (w.codes.size() != nk) {
    return invalid_argument("codes has ", w.codes.size(), " elements; expected n*k = ", nk);
  }
  const int64_t groups = w.num_groups();
  const size_t gn = static_cast<size_t>(groups * w.n);
  if (w.scales.size() != gn) {
    return invalid_argument("scales has ", w.scales.size(), " elements; expected groups*n = ",
                            groups, "*", w.n, " = ", gn);
  }
  const int max_code = (1 << w.bits) - 1;
  for (size_t i = 0; i < nk; ++i) {
    if (w.codes[i] > max_code) {
      return invalid_argument("code ", int(w.codes[i]), " at index ", i, " exceeds ", max_code,
                              " (the largest ", w.bits, "-bit code)");
    }
  }
  for (size_t i = 0; i < gn; ++i) {
    if (!std::isfinite(w.scales[i])) {
      return invalid_argument("scale at index ", i, " is not finite");
    }
  }
  switch (w.zero_kind) {
    case ZeroPointKind::kNone:
      if (!w.zero_codes.empty() || !w.zero_values.empty()) {
        return invalid_argument("zero_kind is none but zero point data is present");
      }
      break;
    case ZeroPointKind::kInteger:
      if (w.zero_codes.size() != gn) {
        return invalid_argument("zero_codes has ", w.zero_codes.size(), " elements; expected ", gn);
      }
      for (size_t i = 0; i < gn; ++i) {
        if (w.zero_codes[i] > max_code) {
          return invalid_argument("zero point ", int(w.zero_codes[i]), " at index ", i,
                                  " exceeds ", max_code);
        }
      }
      break;
    case ZeroPointKind::kFloat:
      if (w.zero_values.size() != gn) {
        return invalid_argument("zero_values has ", w.zero_values.size(), " elements; expected ",
                                gn);
      }
      for (size_t i = 0; i < gn; ++i) {
        if (!std::isfinite(w.zero_values[i])) {
          return invalid_argument("zero value at index ", i, " is not finite");
        }
      }
      break;
    default:
      return invalid_argument("zero_kind ", int(w.zero_kind), " is not one of none/integer/float");
  }
  if (!w.g_idx.empty()) {
    if (w.g_idx.size() != static_cast<size_t>(w.k)) {
      return invalid_argument("g_idx has ", w.g_idx.size(), " entries; expected k = ", w.k);
    }
    if (w.group_size == kChannelwise) {
      return invalid_argument("g_idx (act-order) needs a group size; channelwise has one group");
    }
    std::vector<int64_t> count(static_cast<size_t>(groups), 0);
    for (int64_t kk = 0; kk < w.k; ++kk) {
      const int32_t g = w.g_idx[static_cast<size_t>(kk)];
      if (g < 0 || g >= groups) {
        return invalid_argument("g_idx[", kk, "] = ", g, " is out of range [0, ", groups, ")");
      }
      ++count[static_cast<size_t>(g)];
    }
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t expected = std::min<int64_t>(w.group_size, w.k - g * w.group_size);
      if (count[static_cast<size_t>(g)] != expected) {
        return unsupported("g_idx assigns ", count[static_cast<size_t>(g)], " rows to group ", g,
                           "; act-order needs every group to hold exactly min(group_size, k - g*"
                           "group_size) = ", expected, " rows (the GPTQ act-order rule)");
      }
    }
  }
  return Status();
}

bool operator==(const QuantizedWeight& a, const QuantizedWeight& b) {
  return a.n == b.n && a.k == b.k && a.bits == b.bits && a.group_size == b.group_size &&
         a.codes == b.codes && a.scales == b.scales && a.zero_kind == b.zero_kind &&
         a.zero_codes == b.zero_codes && a.zero_values == b.zero_values && a.g_idx == b.g_idx;
}

}  // namespace sailfish
