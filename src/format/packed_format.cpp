// CPU packer and unpacker: the executable definition of docs/FORMAT.md.
#include "sailfish/packed_format.h"

#include <algorithm>
#include <cmath>

#include "format/zero_split.h"
#include "sailfish/quantize.h"

namespace sailfish {

namespace {

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

Status PackedGeometry::make(int64_t n, int64_t k, int bits, int group_size, PackedGeometry* out) {
  if (out == nullptr) return invalid_argument("PackedGeometry::make: out is null");
  if (bits != 4 && bits != 8) return invalid_argument("bits is ", bits, "; accepted: 4 or 8");
  if (n <= 0 || k <= 0) {
    return invalid_argument("weight shape [n=", n, ", k=", k, "] must be positive");
  }
  if (!is_supported_group_size(group_size)) {
    return invalid_argument("group_size is ", group_size,
                            "; accepted: 16, 32, 64, 128, 256 or -1 (channelwise)");
  }
  // 2^31 words keeps every word index of one tensor in a signed 32-bit cursor on the device.
  if (n > (int64_t(1) << 24) || k > (int64_t(1) << 24) || round_up(n, 64) * round_up(k, 64) * bits / 32 >= (int64_t(1) << 31)) {
    return unsupported("weight shape [n=", n, ", k=", k, "] is too large: packed codes must stay "
                       "under 2^31 32-bit words and each dimension under 2^24");
  }
  PackedGeometry g;
  g.n = n;
  g.k = k;
  g.bits = bits;
  g.group_size = group_size;
  g.n_pad = round_up(n, kPackBlockN);
  g.k_pad = round_up(k, kPackBlockK);
  g.n_blocks = g.n_pad / kPackBlockN;
  g.k_blocks = g.k_pad / kPackBlockK;
  g.group_rows = group_size == kChannelwise ? g.k_pad : group_size;
  g.scale_rows = (g.k_pad + g.group_rows - 1) / g.group_rows;
  *out = g;
  return Status();
}

// docs/FORMAT.md, "Inside a block". Element (r, c) of a 64 x 64 block, r an output row and c an
// input column, is the B-fragment element of mma.m16n8k16 (and the A-fragment element of the
// swapped wgmma) that lane T = 4 * (r % 8) + (c % 8) / 2 holds for n16 group j = r / 16.
int64_t PackedGeometry::word_index(int64_t nn, int64_t kk) const {
  const int64_t block = (nn / kPackBlockN) * k_blocks + kk / kPackBlockK;
  const int r = static_cast<int>(nn % kPackBlockN), c = static_cast<int>(kk % kPackBlockK);
  const int j = r / 16, column_half = (r % 16) / 8;
  const int lane = 4 * (r % 8) + (c % 8) / 2;
  const int k16 = c / 16;
  const int words_per_lane_run = bits;  // 4 words (int4) or 8 words (int8) per (j, lane)
  int64_t word = (j * 32 + lane) * words_per_lane_run;
  word += bits == 4 ? k16 : k16 * 2 + column_half;
  return block * (block_bytes() / 4) + word;
}

int PackedGeometry::lane_position(int64_t nn, int64_t kk) const {
  const int r = static_cast<int>(nn % kPackBlockN), c = static_cast<int>(kk % kPackBlockK);
  const int column_half = (r % 16) / 8;
  const int k_half = (c % 16) / 8;  // k rows 0..7 or 8..15 of the k16 slice
  const int k_odd = c % 2;          // the second element of a bf16x2 / half2 pair
  // int4 nibbles, low to high: (k0,c) (k8,c) (k0,c+8) (k8,c+8) (k1,c) (k9,c) (k1,c+8) (k9,c+8)
  // int8 bytes, low to high (one word per column half): k0 k8 k1 k9
  return bits == 4 ? k_odd * 4 + column_half * 2 + k_half : k_odd * 2 + k_half;
}

Status act_order_permutation(const std::vector<int32_t>& g_idx, int64_t k, int64_t group_rows,
                             int64_t num_groups, std::vector<int32_t>* perm) {
  if (perm == nullptr) return invalid_argument("act_order_permutation: perm is null");
  if (static_cast<int64_t>(g_idx.size()) != k) {
    return invalid_argument("g_idx has ", g_idx.size(), " entries; expected k = ", k);
  }
  // The group geometry is the caller's: check it before it sizes the count vector (a negative
  // count throws from std::vector, a huge one exhausts memory). The balance rule below accepts
  // ceil(k / group_rows) groups, one more (empty) when group_rows divides k, and nothing else.
  if (group_rows < 1) {
    return invalid_argument("act_order_permutation: group_rows is ", group_rows,
                            "; accepted: >= 1");
  }
  const int64_t needed_groups = ceil_div(k, group_rows);
  if (num_groups < 0 || num_groups > needed_groups + 1) {
    return invalid_argument("act_order_permutation: num_groups is ", num_groups, "; k = ", k,
                            " in groups of ", group_rows, " rows makes ", needed_groups,
                            " groups");
  }
  std::vector<int64_t> next(static_cast<size_t>(num_groups), 0);
  for (int64_t kk = 0; kk < k; ++kk) {
    const int32_t g = g_idx[static_cast<size_t>(kk)];
    if (g < 0 || g >= num_groups) {
      return invalid_argument("g_idx[", kk, "] = ", g, " is out of range [0, ", num_groups, ")");
    }
    ++next[static_cast<size_t>(g)];
  }
  for (int64_t g = 0; g < num_groups; ++g) {
    const int64_t expected = std::min<int64_t>(group_rows, k - g * group_rows);
    if (next[static_cast<size_t>(g)] != expected) {
      return unsupported("g_idx assigns ", next[static_cast<size_t>(g)], " rows to group ", g,
                         "; act-order needs exactly ", expected, " (the GPTQ act-order rule)");
    }
    next[static_cast<size_t>(g)] = g * group_rows;  // first packed row of group g
  }
  // A stable counting sort: rows of one group keep their input order.
  perm->assign(static_cast<size_t>(k), 0);
  for (int64_t kk = 0; kk < k; ++kk) {
    const size_t g = static_cast<size_t>(g_idx[static_cast<size_t>(kk)]);
    (*perm)[static_cast<size_t>(next[g]++)] = static_cast<int32_t>(kk);
  }
  return Status();
}

Status pack(const QuantizedWeight& w, DType scale_dtype, PackedWeight* out) {
  if (out == nullptr) return invalid_argument("pack: out is null");
  if (scale_dtype != DType::kF16 && scale_dtype != DType::kBF16) {
    return invalid_argument("pack: scale dtype is ", dtype_name(scale_dtype),
                            "; accepted: fp16 or bf16 (the activation type the weight serves)");
  }
  SF_RETURN_IF_ERROR(validate(w));
  PackedWeight p;
  SF_RETURN_IF_ERROR(PackedGeometry::make(w.n, w.k, w.bits, w.group_size, &p.geometry));
  const PackedGeometry& geo = p.geometry;
  p.scale_dtype = scale_dtype;
  p.zero_kind = w.zero_kind;
  if (!w.g_idx.empty()) {
    SF_RETURN_IF_ERROR(
        act_order_permutation(w.g_idx, w.k, geo.group_rows, w.num_groups(), &p.perm));
  }

  // Codes. Padding (rows past n, columns past k) holds the code bias; its scale is zero and the
  // activations past k are masked, so it never contributes.
  const uint32_t bias = static_cast<uint32_t>(code_bias(w.bits));
  const int per_word = 32 / w.bits;
  const uint32_t fill_word = [&] {
    uint32_t word = 0;
    for (int i = 0; i < per_word; ++i) word |= bias << (i * w.bits);
    return word;
  }();
  std::vector<uint32_t> words(static_cast<size_t>(geo.code_bytes() / 4), fill_word);
  const uint32_t mask = (1u << w.bits) - 1;
  for (int64_t nn = 0; nn < w.n; ++nn) {
    for (int64_t r = 0; r < w.k; ++r) {
      const int64_t source_k = p.perm.empty() ? r : p.perm[static_cast<size_t>(r)];
      const uint32_t code = w.codes[static_cast<size_t>(nn * w.k + source_k)];
      uint32_t& word = words[static_cast<size_t>(geo.word_index(nn, r))];
      const int shift = geo.lane_position(nn, r) * w.bits;
      word = (word & ~(mask << shift)) | (code << shift);
    }
  }
  p.codes.resize(static_cast<size_t>(geo.code_bytes()));
  for (size_t i = 0; i < words.size(); ++i) {  // little-endian bytes of each word
    for (int b = 0; b < 4; ++b) p.codes[i * 4 + b] = static_cast<uint8_t>(words[i] >> (8 * b));
  }

  // Scales and zero points: [scale_rows][n_pad]; packed row r uses scale row r / group_rows.
  // With act-order the sort makes packed group g exactly the rows of input group g.
  const size_t meta = static_cast<size_t>(geo.scale_rows * geo.n_pad);
  p.scales.assign(meta, float_to_bits(0.0f, scale_dtype));
  const bool has_zero = w.zero_kind != ZeroPointKind::kNone;
  if (has_zero) {
    // Two planes: shifts [0, meta) (integers), folds [meta, 2 meta); padding 0 and +0.0.
    p.zero_fold.assign(2 * meta, float_to_bits(0.0f, scale_dtype));
    p.zero_points.assign(meta, static_cast<float>(bias));
  }
  for (int64_t g = 0; g < w.num_groups(); ++g) {
    for (int64_t nn = 0; nn < w.n; ++nn) {
      const size_t src = static_cast<size_t>(g * w.n + nn);
      const size_t dst = static_cast<size_t>(g * geo.n_pad + nn);
      const uint16_t scale_bits = float_to_bits(w.scales[src], scale_dtype);
      p.scales[dst] = scale_bits;
      if (has_zero) {
        const double zp = w.zero_point(g, nn);
        const format::ZeroSplit split =
            format::split_zero_point(zp, bits_to_float(scale_bits, scale_dtype), w.bits);
        p.zero_fold[dst] = static_cast<uint16_t>(split.shift);  // an unsigned integer
        // The fold rounded to float, then to the scale type: the only rounding the zero point
        // adds (docs/FORMAT.md); the GPU repack (src/repack/pack_element.h) rounds the same way.
        p.zero_fold[meta + dst] = float_to_bits(static_cast<float>(split.fold), scale_dtype);
        p.zero_points[dst] = static_cast<float>(zp);
      }
    }
  }
  *out = std::move(p);
  return Status();
}

bool same_geometry(const PackedGeometry& a, const PackedGeometry& b) {
  return a.n == b.n && a.k == b.k && a.bits == b.bits && a.group_size == b.group_size &&
         a.n_pad == b.n_pad && a.k_pad == b.k_pad && a.n_blocks == b.n_blocks &&
         a.k_blocks == b.k_blocks && a.group_rows == b.group_rows && a.scale_rows == b.scale_rows;
}

Status validate(const PackedGeometry& g) {
  PackedGeometry made;
  SF_RETURN_IF_ERROR(PackedGeometry::make(g.n, g.k, g.bits, g.group_size, &made));
  if (!same_geometry(made, g)) {
    return invalid_argument("packed geometry is inconsistent with [n=", g.n, ", k=", g.k,
                            ", bits=", g.bits, ", group_size=", g.group_size,
                            "] (n_pad, k_pad, n_blocks, k_blocks, group_rows or scale_rows differ "
                            "from PackedGeometry::make's); build it with PackedGeometry::make");
  }
  return Status();
}

Status validate(const PackedWeight& p) {
  if (p.version != kPackedFormatVersion) {
    return unsupported("packed weight has format version ", p.version, "; this build reads version ",
                       kPackedFormatVersion, " only: repack from the checkpoint");
  }
  SF_RETURN_IF_ERROR(validate(p.geometry));
  const PackedGeometry& geo = p.geometry;
  if (p.scale_dtype != DType::kF16 && p.scale_dtype != DType::kBF16) {
    return invalid_argument("packed scale dtype is ", dtype_name(p.scale_dtype),
                            "; accepted: fp16 or bf16");
  }
  if (p.codes.size() != static_cast<size_t>(geo.code_bytes())) {
    return invalid_argument("packed codes hold ", p.codes.size(), " bytes; expected ",
                            geo.code_bytes());
  }
  const size_t meta = static_cast<size_t>(geo.scale_rows * geo.n_pad);
  if (p.scales.size() != meta) {
    return invalid_argument("packed scales hold ", p.scales.size(), " values; expected ", meta);
  }
  const bool has_zero = p.zero_kind != ZeroPointKind::kNone;
  if (p.zero_kind != ZeroPointKind::kNone && p.zero_kind != ZeroPointKind::kInteger &&
      p.zero_kind != ZeroPointKind::kFloat) {
    return invalid_argument("packed zero kind ", int(p.zero_kind), " is not none/integer/float");
  }
  if (p.zero_fold.size() != (has_zero ? 2 * meta : 0) ||
      p.zero_points.size() != (has_zero ? meta : 0)) {
    return invalid_argument("packed zero points hold ", p.zero_fold.size(),
                            " shift and fold values and ", p.zero_points.size(),
                            " zero points; expected ", has_zero ? 2 * meta : 0, " and ",
                            has_zero ? meta : 0, " for zero kind ",
                            zero_point_kind_name(p.zero_kind));
  }
  if (has_zero) {
    // The zero planes' values, not only their sizes: unpack() casts an integer zero point to a
    // uint8 code (a fraction would truncate, a value out of range is undefined behaviour), and the
    // kernels add a shift into a mantissa assuming it is a code (src/format/zero_split.h), so a
    // damaged or forged weight must stop here, before unpack or upload.
    const int max_code = (1 << geo.bits) - 1;
    for (size_t i = 0; i < meta; ++i) {
      const float zp = p.zero_points[i];
      if (!std::isfinite(zp)) {
        return invalid_argument("packed zero point at index ", i, " is not finite");
      }
      if (p.zero_kind == ZeroPointKind::kInteger &&
          !(zp >= 0.0f && zp <= static_cast<float>(max_code) && zp == std::floor(zp))) {
        return invalid_argument("packed zero point ", zp, " at index ", i, " is not a ",
                                geo.bits, "-bit code; accepted for zero kind integer: an integer "
                                "in [0, ", max_code, "]");
      }
      if (p.zero_fold[i] > max_code) {
        return invalid_argument("packed zero shift ", p.zero_fold[i], " at index ", i,
                                " exceeds ", max_code, "; accepted: a ", geo.bits,
                                "-bit code in [0, ", max_code, "]");
      }
    }
  }
  if (!p.perm.empty()) {
    if (p.perm.size() != static_cast<size_t>(geo.k)) {
      return invalid_argument("packed perm has ", p.perm.size(), " entries; expected k = ", geo.k);
    }
    std::vector<bool> seen(static_cast<size_t>(geo.k), false);
    for (int32_t v : p.perm) {
      if (v < 0 || v >= geo.k || seen[static_cast<size_t>(v)]) {
        return invalid_argument("packed perm is not a permutation of [0, ", geo.k, ")");
      }
      seen[static_cast<size_t>(v)] = true;
    }
  }
  return Status();
}

Status unpack(const PackedWeight& p, QuantizedWeight* out) {
  if (out == nullptr) return invalid_argument("unpack: out is null");
  SF_RETURN_IF_ERROR(validate(p));
  const PackedGeometry& geo = p.geometry;
  QuantizedWeight w;
  w.n = geo.n;
  w.k = geo.k;
  w.bits = geo.bits;
  w.group_size = geo.group_size;
  w.zero_kind = p.zero_kind;
  const uint32_t mask = (1u << geo.bits) - 1;
  w.codes.resize(static_cast<size_t>(w.n * w.k));
  for (int64_t nn = 0; nn < w.n; ++nn) {
    for (int64_t r = 0; r < w.k; ++r) {
      const size_t byte = static_cast<size_t>(geo.word_index(nn, r) * 4);
      const uint32_t word = uint32_t(p.codes[byte]) | uint32_t(p.codes[byte + 1]) << 8 |
                            uint32_t(p.codes[byte + 2]) << 16 | uint32_t(p.codes[byte + 3]) << 24;
      const int64_t source_k = p.perm.empty() ? r : p.perm[static_cast<size_t>(r)];
      w.codes[static_cast<size_t>(nn * w.k + source_k)] =
          static_cast<uint8_t>((word >> (geo.lane_position(nn, r) * geo.bits)) & mask);
    }
  }
  const int64_t groups = w.num_groups();
  const size_t gn = static_cast<size_t>(groups * w.n);
  w.scales.resize(gn);
  if (w.zero_kind == ZeroPointKind::kInteger) w.zero_codes.resize(gn);
  if (w.zero_kind == ZeroPointKind::kFloat) w.zero_values.resize(gn);
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t nn = 0; nn < w.n; ++nn) {
      const size_t src = static_cast<size_t>(g * geo.n_pad + nn);
      const size_t dst = static_cast<size_t>(g * w.n + nn);
      w.scales[dst] = bits_to_float(p.scales[src], p.scale_dtype);
      if (w.zero_kind == ZeroPointKind::kInteger) {
        w.zero_codes[dst] = static_cast<uint8_t>(p.zero_points[src]);
      } else if (w.zero_kind == ZeroPointKind::kFloat) {
        w.zero_values[dst] = p.zero_points[src];
      }
    }
  }
  if (!p.perm.empty()) {
    w.g_idx.resize(static_cast<size_t>(w.k));
    for (int64_t r = 0; r < w.k; ++r) {
      w.g_idx[static_cast<size_t>(p.perm[static_cast<size_t>(r)])] =
          static_cast<int32_t>(r / geo.group_rows);
    }
  }
  SF_RETURN_IF_ERROR(validate(w));
  *out = std::move(w);
  return Status();
}

}  // namespace sailfish
