// GPTQ (AutoGPTQ / GPTQModel) tensors <-> QuantizedWeight.
//
// Layout recap (importers.h has the full statement):
//   qweight [k / per_word][n]           codes packed along K, earliest k in the lowest bits
//   qzeros  [groups][n / per_word]      zero points packed along N, earliest n in the lowest bits
//   scales  [groups][n], g_idx [k] or empty
// where per_word = 32 / bits. Both directions check every size before touching any element, so a
// malformed checkpoint yields a Status and never an out-of-bounds read.
#include <cstdint>
#include <utility>
#include <vector>

#include "sailfish/importers.h"

namespace sailfish {

namespace {

int codes_per_word(int bits) { return 32 / bits; }
uint32_t code_mask(int bits) { return (1u << bits) - 1u; }

// The int32 tensors are bit containers: reinterpret through uint32 so shifts never see a sign.
uint32_t as_bits(int32_t word) { return static_cast<uint32_t>(word); }
int32_t as_word(uint32_t bits) { return static_cast<int32_t>(bits); }

// a * b for positive operands, false when the product does not fit in int64 (absurd shapes must
// be rejected before they wrap around into a size that happens to match a tensor).
bool checked_mul(int64_t a, int64_t b, int64_t* product) {
  return !__builtin_mul_overflow(a, b, product);
}

Status check_count(const char* tensor, size_t found, int64_t expected, const char* formula) {
  if (found != static_cast<uint64_t>(expected)) {
    return invalid_argument("GPTQ ", tensor, " has ", found, " elements; expected ", formula,
                            " = ", expected);
  }
  return Status();
}

Status check_shape_and_layout(int64_t k, int64_t n, int bits, int group_size) {
  if (bits != 4 && bits != 8) {
    return invalid_argument("GPTQ bits is ", bits, "; accepted: 4 or 8");
  }
  if (n <= 0 || k <= 0) {
    return invalid_argument("GPTQ shape is [k=", k, ", n=", n, "]; both must be positive");
  }
  if (!is_supported_group_size(group_size)) {
    return invalid_argument("GPTQ group_size is ", group_size,
                            "; accepted: 16, 32, 64, 128, 256 or -1 (channelwise)");
  }
  const int per_word = codes_per_word(bits);
  if (k % per_word != 0) {
    return invalid_argument("GPTQ k is ", k, "; qweight packs ", per_word, " ", bits,
                            "-bit codes per int32 along K, so k must be a multiple of ", per_word);
  }
  int64_t unused;
  if (!checked_mul(k, n, &unused)) {
    return invalid_argument("GPTQ shape [k=", k, ", n=", n, "] is too large (k*n overflows)");
  }
  return Status();
}

Status check_n_packs_zeros(int64_t n, int bits) {
  const int per_word = codes_per_word(bits);
  if (n % per_word != 0) {
    return invalid_argument("GPTQ n is ", n, "; qzeros packs ", per_word, " ", bits,
                            "-bit zero points per int32 along N, so n must be a multiple of ",
                            per_word);
  }
  return Status();
}

Status check_convention(GptqZeroConvention convention) {
  if (convention != GptqZeroConvention::kV1MinusOne &&
      convention != GptqZeroConvention::kV2Exact) {
    return invalid_argument("GPTQ zero convention ", static_cast<int>(convention),
                            " is neither v1 (minus one) nor v2 (exact)");
  }
  return Status();
}

Status check_tensor_sizes(const GptqTensors& in) {
  const int64_t per_word = codes_per_word(in.bits);
  const int64_t groups = group_count(in.k, in.group_size);
  // k*n fits (checked above), so every product below, each no larger, fits too.
  SF_RETURN_IF_ERROR(check_count("qweight", in.qweight.size(), in.k / per_word * in.n,
                                 "k*bits/32 * n"));
  SF_RETURN_IF_ERROR(check_count("scales", in.scales.size(), groups * in.n, "groups * n"));
  if (!in.qzeros.empty()) {
    SF_RETURN_IF_ERROR(check_n_packs_zeros(in.n, in.bits));
    SF_RETURN_IF_ERROR(check_count("qzeros", in.qzeros.size(), groups * (in.n / per_word),
                                   "groups * n*bits/32"));
  }
  if (!in.g_idx.empty()) {
    SF_RETURN_IF_ERROR(check_count("g_idx", in.g_idx.size(), in.k, "k"));
  }
  return Status();
}

// Stored qzeros value <-> zero point. v1 stores zp - 1. A v1 stored value of 2^bits - 1 would
// become 2^bits, which no code can hold; AutoGPTQ's kernels add one inside the packed word, which
// wraps, so it means zero point 0. We do the same in both directions so the map is a bijection.
uint32_t zero_from_stored(uint32_t stored, int bits, GptqZeroConvention convention) {
  if (convention == GptqZeroConvention::kV2Exact) return stored;
  return (stored + 1u) & code_mask(bits);
}
uint32_t stored_from_zero(uint32_t zero, int bits, GptqZeroConvention convention) {
  if (convention == GptqZeroConvention::kV2Exact) return zero;
  return (zero - 1u) & code_mask(bits);
}

// qweight [k/per_word][n] -> codes [n][k].
std::vector<uint8_t> unpack_codes(const GptqTensors& in) {
  const int per_word = codes_per_word(in.bits);
  const uint32_t mask = code_mask(in.bits);
  std::vector<uint8_t> codes(static_cast<size_t>(in.n * in.k));
  const int64_t rows = in.k / per_word;
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t col = 0; col < in.n; ++col) {
      const uint32_t word = as_bits(in.qweight[static_cast<size_t>(row * in.n + col)]);
      uint8_t* dst = &codes[static_cast<size_t>(col * in.k + row * per_word)];
      for (int e = 0; e < per_word; ++e) {
        dst[e] = static_cast<uint8_t>((word >> (e * in.bits)) & mask);
      }
    }
  }
  return codes;
}

// qzeros [groups][n/per_word] -> zero points [groups][n], convention applied.
std::vector<uint8_t> unpack_zeros(const GptqTensors& in, int64_t groups) {
  const int per_word = codes_per_word(in.bits);
  const uint32_t mask = code_mask(in.bits);
  const int64_t words_per_group = in.n / per_word;
  std::vector<uint8_t> zeros(static_cast<size_t>(groups * in.n));
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t j = 0; j < words_per_group; ++j) {
      const uint32_t word = as_bits(in.qzeros[static_cast<size_t>(g * words_per_group + j)]);
      uint8_t* dst = &zeros[static_cast<size_t>(g * in.n + j * per_word)];
      for (int e = 0; e < per_word; ++e) {
        const uint32_t stored = (word >> (e * in.bits)) & mask;
        dst[e] = static_cast<uint8_t>(zero_from_stored(stored, in.bits, in.zero_convention));
      }
    }
  }
  return zeros;
}

bool all_equal(const std::vector<uint8_t>& values, int value) {
  for (uint8_t v : values) {
    if (v != value) return false;
  }
  return true;
}

// Channelwise GPTQ checkpoints still carry g_idx, all zeros (AutoGPTQ sets group_size = k). The
// canonical form has no g_idx for one group, so that trivial one is dropped; any other g_idx is
// kept as it is and validate() judges it.
std::vector<int32_t> canonical_g_idx(const GptqTensors& in) {
  if (in.group_size == kChannelwise) {
    bool all_zero = true;
    for (int32_t g : in.g_idx) all_zero = all_zero && g == 0;
    if (all_zero) return {};
  }
  return in.g_idx;
}

// codes [n][k] -> qweight [k/per_word][n].
std::vector<int32_t> pack_codes(const QuantizedWeight& w) {
  const int per_word = codes_per_word(w.bits);
  const int64_t rows = w.k / per_word;
  std::vector<int32_t> qweight(static_cast<size_t>(rows * w.n));
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t col = 0; col < w.n; ++col) {
      const uint8_t* src = &w.codes[static_cast<size_t>(col * w.k + row * per_word)];
      uint32_t word = 0;
      for (int e = 0; e < per_word; ++e) word |= static_cast<uint32_t>(src[e]) << (e * w.bits);
      qweight[static_cast<size_t>(row * w.n + col)] = as_word(word);
    }
  }
  return qweight;
}

// Zero points [groups][n] (the code bias for kNone) -> qzeros [groups][n/per_word].
std::vector<int32_t> pack_zeros(const QuantizedWeight& w, GptqZeroConvention convention) {
  const int per_word = codes_per_word(w.bits);
  const int64_t groups = w.num_groups();
  const int64_t words_per_group = w.n / per_word;
  const bool symmetric = w.zero_kind == ZeroPointKind::kNone;
  std::vector<int32_t> qzeros(static_cast<size_t>(groups * words_per_group));
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t j = 0; j < words_per_group; ++j) {
      uint32_t word = 0;
      for (int e = 0; e < per_word; ++e) {
        const size_t i = static_cast<size_t>(g * w.n + j * per_word + e);
        const uint32_t zero = symmetric ? code_bias(w.bits) : w.zero_codes[i];
        word |= stored_from_zero(zero, w.bits, convention) << (e * w.bits);
      }
      qzeros[static_cast<size_t>(g * words_per_group + j)] = as_word(word);
    }
  }
  return qzeros;
}

}  // namespace

Status import_gptq(const GptqTensors& in, QuantizedWeight* out) {
  if (out == nullptr) return invalid_argument("import_gptq: out is null");
  SF_RETURN_IF_ERROR(check_shape_and_layout(in.k, in.n, in.bits, in.group_size));
  SF_RETURN_IF_ERROR(check_convention(in.zero_convention));
  SF_RETURN_IF_ERROR(check_tensor_sizes(in));

  QuantizedWeight w;
  w.n = in.n;
  w.k = in.k;
  w.bits = in.bits;
  w.group_size = in.group_size;
  w.codes = unpack_codes(in);
  w.scales = in.scales;
  w.g_idx = canonical_g_idx(in);
  if (!in.qzeros.empty()) {
    std::vector<uint8_t> zeros = unpack_zeros(in, w.num_groups());
    // Symmetric checkpoints write the code bias everywhere; keep them on the symmetric path.
    if (!all_equal(zeros, code_bias(in.bits))) {
      w.zero_kind = ZeroPointKind::kInteger;
      w.zero_codes = std::move(zeros);
    }
  }
  SF_RETURN_IF_ERROR(validate(w));
  *out = std::move(w);
  return Status();
}

Status export_gptq(const QuantizedWeight& in, GptqZeroConvention convention, GptqTensors* out) {
  if (out == nullptr) return invalid_argument("export_gptq: out is null");
  SF_RETURN_IF_ERROR(validate(in));
  if (in.zero_kind == ZeroPointKind::kFloat) {
    return unsupported("GPTQ cannot store fractional zero points: qzeros holds ", in.bits,
                       "-bit integer codes, but this weight has float zero points");
  }
  SF_RETURN_IF_ERROR(check_shape_and_layout(in.k, in.n, in.bits, in.group_size));
  SF_RETURN_IF_ERROR(check_n_packs_zeros(in.n, in.bits));
  SF_RETURN_IF_ERROR(check_convention(convention));

  GptqTensors t;
  t.k = in.k;
  t.n = in.n;
  t.bits = in.bits;
  t.group_size = in.group_size;
  t.qweight = pack_codes(in);
  t.qzeros = pack_zeros(in, convention);
  t.scales = in.scales;
  t.g_idx = in.g_idx;
  t.zero_convention = convention;
  *out = std::move(t);
  return Status();
}

}  // namespace sailfish
