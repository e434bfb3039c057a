// AWQ (AutoAWQ GEMM) tensors <-> QuantizedWeight. 4-bit only, always asymmetric.
//
// Layout recap (importers.h has the full statement):
//   qweight [k][n / 8]        word j of row k holds columns 8j..8j+7, interleaved (below)
//   qzeros  [groups][n / 8]   the same interleaving, zero points stored exactly
//   scales  [groups][n]
// AWQ packs along N, not K, so k may be anything; n must fill whole words. There is no g_idx.
// Every size is checked before any element is read, so malformed tensors yield a Status.
#include <cstdint>
#include <utility>
#include <vector>

#include "sailfish/importers.h"

namespace sailfish {

namespace {

constexpr int kAwqBits = 4;
constexpr int kColumnsPerWord = 8;
// Nibble i of a word holds column 8j + kNibbleColumn[i]. AutoAWQ interleaves so that its GEMM
// kernel can split even and odd columns of a word with one shift and mask each.
constexpr int kNibbleColumn[kColumnsPerWord] = {0, 2, 4, 6, 1, 3, 5, 7};

uint32_t as_bits(int32_t word) { return static_cast<uint32_t>(word); }
int32_t as_word(uint32_t bits) { return static_cast<int32_t>(bits); }

Status check_count(const char* tensor, size_t found, int64_t expected, const char* formula) {
  if (found != static_cast<uint64_t>(expected)) {
    return invalid_argument("AWQ ", tensor, " has ", found, " elements; expected ", formula,
                            " = ", expected);
  }
  return Status();
}

Status check_shape(int64_t k, int64_t n, int group_size) {
  if (n <= 0 || k <= 0) {
    return invalid_argument("AWQ shape is [k=", k, ", n=", n, "]; both must be positive");
  }
  if (n % kColumnsPerWord != 0) {
    return invalid_argument("AWQ n is ", n, "; qweight and qzeros pack ", kColumnsPerWord,
                            " columns per int32, so n must be a multiple of ", kColumnsPerWord);
  }
  if (!is_supported_group_size(group_size)) {
    return invalid_argument("AWQ group_size is ", group_size,
                            "; accepted: 16, 32, 64, 128, 256 or -1 (channelwise)");
  }
  int64_t unused;
  if (__builtin_mul_overflow(k, n, &unused)) {
    return invalid_argument("AWQ shape [k=", k, ", n=", n, "] is too large (k*n overflows)");
  }
  return Status();
}

Status check_tensor_sizes(const AwqTensors& in) {
  const int64_t words_per_row = in.n / kColumnsPerWord;
  const int64_t groups = group_count(in.k, in.group_size);
  // k*n fits (checked above), so these products, each no larger, fit too.
  SF_RETURN_IF_ERROR(check_count("qweight", in.qweight.size(), in.k * words_per_row, "k * n/8"));
  SF_RETURN_IF_ERROR(
      check_count("qzeros", in.qzeros.size(), groups * words_per_row, "groups * n/8"));
  SF_RETURN_IF_ERROR(check_count("scales", in.scales.size(), groups * in.n, "groups * n"));
  return Status();
}

// One interleaved row of words [rows][n/8] -> values [rows][n] (row-major), and back.
void unpack_row(const int32_t* words, int64_t n, uint8_t* values) {
  for (int64_t j = 0; j < n / kColumnsPerWord; ++j) {
    const uint32_t word = as_bits(words[j]);
    for (int i = 0; i < kColumnsPerWord; ++i) {
      values[j * kColumnsPerWord + kNibbleColumn[i]] =
          static_cast<uint8_t>((word >> (i * kAwqBits)) & 0xfu);
    }
  }
}
void pack_row(const uint8_t* values, int64_t n, int32_t* words) {
  for (int64_t j = 0; j < n / kColumnsPerWord; ++j) {
    uint32_t word = 0;
    for (int i = 0; i < kColumnsPerWord; ++i) {
      word |= static_cast<uint32_t>(values[j * kColumnsPerWord + kNibbleColumn[i]])
              << (i * kAwqBits);
    }
    words[j] = as_word(word);
  }
}

// qweight [k][n/8] -> codes [n][k] (a transpose on the way: AWQ rows are K, ours are N).
std::vector<uint8_t> unpack_codes(const AwqTensors& in) {
  const int64_t words_per_row = in.n / kColumnsPerWord;
  std::vector<uint8_t> codes(static_cast<size_t>(in.n * in.k));
  std::vector<uint8_t> row(static_cast<size_t>(in.n));
  for (int64_t kk = 0; kk < in.k; ++kk) {
    unpack_row(&in.qweight[static_cast<size_t>(kk * words_per_row)], in.n, row.data());
    for (int64_t nn = 0; nn < in.n; ++nn) codes[static_cast<size_t>(nn * in.k + kk)] = row[nn];
  }
  return codes;
}

std::vector<int32_t> pack_codes(const QuantizedWeight& w) {
  const int64_t words_per_row = w.n / kColumnsPerWord;
  std::vector<int32_t> qweight(static_cast<size_t>(w.k * words_per_row));
  std::vector<uint8_t> row(static_cast<size_t>(w.n));
  for (int64_t kk = 0; kk < w.k; ++kk) {
    for (int64_t nn = 0; nn < w.n; ++nn) row[nn] = w.codes[static_cast<size_t>(nn * w.k + kk)];
    pack_row(row.data(), w.n, &qweight[static_cast<size_t>(kk * words_per_row)]);
  }
  return qweight;
}

// Zero points are already [groups][n] in both forms: only the interleaving differs.
std::vector<uint8_t> unpack_zeros(const AwqTensors& in, int64_t groups) {
  const int64_t words_per_row = in.n / kColumnsPerWord;
  std::vector<uint8_t> zeros(static_cast<size_t>(groups * in.n));
  for (int64_t g = 0; g < groups; ++g) {
    unpack_row(&in.qzeros[static_cast<size_t>(g * words_per_row)], in.n,
               &zeros[static_cast<size_t>(g * in.n)]);
  }
  return zeros;
}

std::vector<int32_t> pack_zeros(const QuantizedWeight& w) {
  const int64_t groups = w.num_groups();
  const int64_t words_per_row = w.n / kColumnsPerWord;
  // A symmetric weight becomes AWQ's explicit form: every zero point is the code bias.
  const uint8_t bias = static_cast<uint8_t>(code_bias(kAwqBits));
  std::vector<uint8_t> zeros = w.zero_kind == ZeroPointKind::kInteger
                                   ? w.zero_codes
                                   : std::vector<uint8_t>(static_cast<size_t>(groups * w.n), bias);
  std::vector<int32_t> qzeros(static_cast<size_t>(groups * words_per_row));
  for (int64_t g = 0; g < groups; ++g) {
    pack_row(&zeros[static_cast<size_t>(g * w.n)], w.n,
             &qzeros[static_cast<size_t>(g * words_per_row)]);
  }
  return qzeros;
}

Status check_exportable(const QuantizedWeight& in) {
  if (in.bits != kAwqBits) {
    return unsupported("AWQ stores 4-bit codes only; this weight has bits = ", in.bits);
  }
  if (in.zero_kind == ZeroPointKind::kFloat) {
    return unsupported("AWQ cannot store fractional zero points: qzeros holds 4-bit integer "
                       "codes, but this weight has float zero points");
  }
  if (!in.g_idx.empty()) {
    return unsupported("AWQ has no g_idx tensor, so an act-order weight (non-empty g_idx) "
                       "cannot be exported to it");
  }
  return Status();
}

}  // namespace

Status import_awq(const AwqTensors& in, QuantizedWeight* out) {
  if (out == nullptr) return invalid_argument("import_awq: out is null");
  SF_RETURN_IF_ERROR(check_shape(in.k, in.n, in.group_size));
  SF_RETURN_IF_ERROR(check_tensor_sizes(in));

  QuantizedWeight w;
  w.n = in.n;
  w.k = in.k;
  w.bits = kAwqBits;
  w.group_size = in.group_size;
  w.codes = unpack_codes(in);
  w.scales = in.scales;
  // AWQ zero points are real data even when they all equal 8: keep them exact, as kInteger.
  w.zero_kind = ZeroPointKind::kInteger;
  w.zero_codes = unpack_zeros(in, w.num_groups());
  SF_RETURN_IF_ERROR(validate(w));
  *out = std::move(w);
  return Status();
}

Status export_awq(const QuantizedWeight& in, AwqTensors* out) {
  if (out == nullptr) return invalid_argument("export_awq: out is null");
  SF_RETURN_IF_ERROR(validate(in));
  SF_RETURN_IF_ERROR(check_exportable(in));
  SF_RETURN_IF_ERROR(check_shape(in.k, in.n, in.group_size));

  AwqTensors t;
  t.k = in.k;
  t.n = in.n;
  t.group_size = in.group_size;
  t.qweight = pack_codes(in);
  t.qzeros = pack_zeros(in);
  t.scales = in.scales;
  *out = std::move(t);
  return Status();
}

}  // namespace sailfish
