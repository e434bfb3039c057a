// ONNX Runtime com.microsoft::MatMulNBits <-> canonical QuantizedWeight.
//
// MatMulNBits keeps everything row-of-N major ([n][k_blocks] scales and zero points, [n][k_blocks]
// [blob] codes) while the canonical form keeps per-group data [groups][n]; the conversion is a
// transpose plus bit (un)packing. Groups are the K blocks, so group_size = block_size.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sailfish/importers.h"

namespace sailfish {

namespace {

// MatMulNBits allows bits 2..8 and any power-of-two block_size >= 16; Sailfish serves 4 and 8 bit
// codes, and ORT's CPU kernel (the oracle) accepts blocks up to 256, which is also the largest
// canonical group size.
Status check_bits_and_block(int bits, int block_size) {
  if (bits != 4 && bits != 8) {
    return invalid_argument("MatMulNBits bits is ", bits, "; accepted: 4 or 8");
  }
  const bool power_of_two = block_size > 0 && (block_size & (block_size - 1)) == 0;
  if (!power_of_two || block_size < 16 || block_size > 256) {
    return invalid_argument("MatMulNBits block_size is ", block_size,
                            "; accepted: a power of two in 16..256 (16, 32, 64, 128, 256)");
  }
  return Status();
}

// Code `index` (along K) of a row of codes packed `bits` wide, the earliest in the lowest bits.
inline uint8_t packed_get(const uint8_t* row, int64_t index, int bits) {
  if (bits == 8) return row[index];
  const uint8_t byte = row[index >> 1];
  return static_cast<uint8_t>((index & 1) ? (byte >> 4) : (byte & 0x0f));
}

// Writes code `index` of a packed row; the row must start zeroed for 4-bit.
inline void packed_set(uint8_t* row, int64_t index, int bits, uint8_t code) {
  if (bits == 8) {
    row[index] = code;
    return;
  }
  uint8_t& byte = row[index >> 1];
  byte = static_cast<uint8_t>((index & 1) ? ((byte & 0x0f) | (code << 4))
                                          : ((byte & 0xf0) | (code & 0x0f)));
}

}  // namespace

Status import_matmul_nbits(const MatMulNBitsTensors& in, QuantizedWeight* out) {
  if (out == nullptr) return invalid_argument("import_matmul_nbits: out is null");
  SF_RETURN_IF_ERROR(check_bits_and_block(in.bits, in.block_size));
  if (in.n <= 0 || in.k <= 0) {
    return invalid_argument("MatMulNBits shape is [N=", in.n, ", K=", in.k,
                            "]; both must be positive");
  }
  const int64_t k_blocks = in.k_blocks();
  const int64_t blob = in.blob_bytes();
  // Every size below is at most N*K or N * (k_blocks * blob), the bytes of B: check both fit
  // before forming any. A product that wraps can equal the size of the tensors given (N = 2^62 + 1,
  // K = 64 wraps to 64 bytes of B), and the loops below would then walk N rows of them.
  int64_t row_bytes_checked = 0, unused = 0;
  if (__builtin_mul_overflow(in.n, in.k, &unused) ||
      __builtin_mul_overflow(k_blocks, blob, &row_bytes_checked) ||
      __builtin_mul_overflow(in.n, row_bytes_checked, &unused)) {
    return invalid_argument("MatMulNBits shape [N=", in.n, ", K=", in.k,
                            "] is too large (N*K overflows int64); accepted: N*K < 2^63");
  }
  const size_t b_expected = static_cast<size_t>(in.n * k_blocks * blob);
  if (in.b.size() != b_expected) {
    return invalid_argument("MatMulNBits B has ", in.b.size(),
                            " bytes; expected [N, k_blocks, blob] = [", in.n, ", ", k_blocks, ", ",
                            blob, "] = ", b_expected);
  }
  const size_t nk_blocks = static_cast<size_t>(in.n * k_blocks);
  if (in.scales.size() != nk_blocks) {
    return invalid_argument("MatMulNBits scales has ", in.scales.size(),
                            " elements; expected [N, k_blocks] = [", in.n, ", ", k_blocks, "] = ",
                            nk_blocks);
  }
  const int64_t zero_row_bytes = in.packed_zero_bytes_per_row();
  switch (in.zero_kind) {
    case ZeroPointKind::kNone:
      if (!in.zero_points_packed.empty() || !in.zero_points_typed.empty()) {
        return invalid_argument("MatMulNBits zero_kind is none but zero_points data is present");
      }
      break;
    case ZeroPointKind::kInteger: {
      const size_t expected = static_cast<size_t>(in.n * zero_row_bytes);
      if (in.zero_points_packed.size() != expected) {
        return invalid_argument("MatMulNBits packed zero_points has ",
                                in.zero_points_packed.size(), " bytes; expected [N, ceil(k_blocks"
                                " * bits / 8)] = [", in.n, ", ", zero_row_bytes, "] = ", expected);
      }
      if (!in.zero_points_typed.empty()) {
        return invalid_argument("MatMulNBits zero_kind is integer but typed zero_points are set");
      }
      break;
    }
    case ZeroPointKind::kFloat:
      if (in.zero_points_typed.size() != nk_blocks) {
        return invalid_argument("MatMulNBits typed zero_points has ", in.zero_points_typed.size(),
                                " elements; expected [N, k_blocks] = [", in.n, ", ", k_blocks,
                                "] = ", nk_blocks);
      }
      if (!in.zero_points_packed.empty()) {
        return invalid_argument("MatMulNBits zero_kind is float but packed zero_points are set");
      }
      for (size_t i = 0; i < nk_blocks; ++i) {
        if (!std::isfinite(in.zero_points_typed[i])) {
          return invalid_argument("MatMulNBits typed zero point at index ", i,
                                  " is not finite (NaN or inf)");
        }
      }
      break;
    default:
      return invalid_argument("MatMulNBits zero_kind ", static_cast<int>(in.zero_kind),
                              " is not one of none/integer/float");
  }
  if (!in.g_idx.empty()) {
    if (in.g_idx.size() != static_cast<size_t>(in.k)) {
      return invalid_argument("MatMulNBits g_idx has ", in.g_idx.size(), " entries; expected K = ",
                              in.k);
    }
    for (int64_t kk = 0; kk < in.k; ++kk) {
      const int32_t g = in.g_idx[static_cast<size_t>(kk)];
      if (g < 0 || g >= k_blocks) {
        return invalid_argument("MatMulNBits g_idx[", kk, "] = ", g, " is out of range [0, ",
                                k_blocks, ")");
      }
    }
  }

  // Built aside so that *out is untouched when anything fails.
  QuantizedWeight w;
  w.n = in.n;
  w.k = in.k;
  w.bits = in.bits;
  w.group_size = in.block_size;
  w.zero_kind = in.zero_kind;
  w.g_idx = in.g_idx;
  w.codes.resize(static_cast<size_t>(in.n * in.k));
  const int64_t row_bytes = k_blocks * blob;  // the blobs of one column are contiguous
  for (int64_t nn = 0; nn < in.n; ++nn) {
    const uint8_t* row = in.b.data() + nn * row_bytes;
    uint8_t* dst = w.codes.data() + nn * in.k;
    // Codes at K and beyond are padding of the last block and are dropped here.
    for (int64_t kk = 0; kk < in.k; ++kk) dst[kk] = packed_get(row, kk, in.bits);
  }
  w.scales.resize(nk_blocks);
  for (int64_t nn = 0; nn < in.n; ++nn) {
    for (int64_t g = 0; g < k_blocks; ++g) {
      w.scales[static_cast<size_t>(g * in.n + nn)] =
          in.scales[static_cast<size_t>(nn * k_blocks + g)];
    }
  }
  if (in.zero_kind == ZeroPointKind::kInteger) {
    w.zero_codes.resize(nk_blocks);
    for (int64_t nn = 0; nn < in.n; ++nn) {
      // The spare high nibble of an odd 4-bit row is padding and is ignored.
      const uint8_t* row = in.zero_points_packed.data() + nn * zero_row_bytes;
      for (int64_t g = 0; g < k_blocks; ++g) {
        w.zero_codes[static_cast<size_t>(g * in.n + nn)] = packed_get(row, g, in.bits);
      }
    }
  } else if (in.zero_kind == ZeroPointKind::kFloat) {
    w.zero_values.resize(nk_blocks);
    for (int64_t nn = 0; nn < in.n; ++nn) {
      for (int64_t g = 0; g < k_blocks; ++g) {
        w.zero_values[static_cast<size_t>(g * in.n + nn)] =
            in.zero_points_typed[static_cast<size_t>(nn * k_blocks + g)];
      }
    }
  }
  // Catches what the checks above leave to the canonical rules (non-finite scales, the act-order
  // balance rule).
  SF_RETURN_IF_ERROR(validate(w));
  *out = std::move(w);
  return Status();
}

Status export_matmul_nbits(const QuantizedWeight& in, MatMulNBitsTensors* out) {
  if (out == nullptr) return invalid_argument("export_matmul_nbits: out is null");
  SF_RETURN_IF_ERROR(validate(in));
  if (in.group_size == kChannelwise) {
    return unsupported("MatMulNBits has no channelwise form: block_size must be a power of two in "
                       "16..256; requantize with a group size");
  }
  SF_RETURN_IF_ERROR(check_bits_and_block(in.bits, in.group_size));

  MatMulNBitsTensors t;
  t.n = in.n;
  t.k = in.k;
  t.bits = in.bits;
  t.block_size = in.group_size;
  t.zero_kind = in.zero_kind;
  t.g_idx = in.g_idx;
  const int64_t k_blocks = t.k_blocks();  // equals in.num_groups()
  const int64_t row_bytes = k_blocks * t.blob_bytes();
  const int64_t padded_k = k_blocks * t.block_size;
  const size_t nk_blocks = static_cast<size_t>(in.n * k_blocks);
  t.b.assign(static_cast<size_t>(in.n * row_bytes), 0);
  for (int64_t nn = 0; nn < in.n; ++nn) {
    uint8_t* row = t.b.data() + nn * row_bytes;
    const uint8_t* src = in.codes.data() + nn * in.k;
    for (int64_t kk = 0; kk < in.k; ++kk) packed_set(row, kk, in.bits, src[kk]);
    // ORT's quantizer, fed the zero-padded weight, writes round(0 / s + zp) = zp into the padding.
    // That is the zero point of the positional last block (g_idx does not apply to padding); the
    // code bias stands in when the zero point is not an integer code.
    const uint8_t pad_code =
        in.zero_kind == ZeroPointKind::kInteger
            ? in.zero_codes[static_cast<size_t>((k_blocks - 1) * in.n + nn)]
            : static_cast<uint8_t>(code_bias(in.bits));
    for (int64_t kk = in.k; kk < padded_k; ++kk) packed_set(row, kk, in.bits, pad_code);
  }
  t.scales.resize(nk_blocks);
  for (int64_t nn = 0; nn < in.n; ++nn) {
    for (int64_t g = 0; g < k_blocks; ++g) {
      t.scales[static_cast<size_t>(nn * k_blocks + g)] =
          in.scales[static_cast<size_t>(g * in.n + nn)];
    }
  }
  if (in.zero_kind == ZeroPointKind::kInteger) {
    const int64_t zero_row_bytes = t.packed_zero_bytes_per_row();
    t.zero_points_packed.assign(static_cast<size_t>(in.n * zero_row_bytes), 0);
    for (int64_t nn = 0; nn < in.n; ++nn) {
      uint8_t* row = t.zero_points_packed.data() + nn * zero_row_bytes;
      for (int64_t g = 0; g < k_blocks; ++g) {
        packed_set(row, g, in.bits, in.zero_codes[static_cast<size_t>(g * in.n + nn)]);
      }
      // The spare nibble of an odd 4-bit row: ORT's quantizer writes the code bias there.
      if (in.bits == 4 && (k_blocks & 1)) {
        packed_set(row, k_blocks, in.bits, static_cast<uint8_t>(code_bias(in.bits)));
      }
    }
  } else if (in.zero_kind == ZeroPointKind::kFloat) {
    t.zero_points_typed.resize(nk_blocks);
    for (int64_t nn = 0; nn < in.n; ++nn) {
      for (int64_t g = 0; g < k_blocks; ++g) {
        t.zero_points_typed[static_cast<size_t>(nn * k_blocks + g)] =
            in.zero_values[static_cast<size_t>(g * in.n + nn)];
      }
    }
  }
  *out = std::move(t);
  return Status();
}

}  // namespace sailfish
