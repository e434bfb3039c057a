// The unit of work of the repack kernels, as host+device functions: one packed code word, one
// metadata entry (scale and zero fold). The kernels (pack_codes.cu, pack_metadata.cu) are thin
// loops around these, and tests/cpu/repack_mapping_test.cpp runs the same functions on the host
// over every word of a weight to compare them with the CPU packer without a GPU.
#pragma once

#include <cstdint>

#include "repack/dtype_convert.h"
#include "repack/layout_inverse.h"
#include "format/zero_split.h"
#include "repack/source_readers.h"
#include "sailfish/types.h"

namespace sailfish::repack {

// What a code word needs to know about the weight.
struct CodeLayout {
  int64_t n, k;           // logical shape
  int64_t k_blocks;       // packed blocks along k
  int64_t total_words;    // code_bytes / 4
  int bits;
  const int32_t* perm;    // act-order: packed column r holds source column perm[r]; or null
};

// Packed word `word`: each lane takes the element the forward mapping put there, the code bias
// for padding (rows >= n or packed columns >= k), exactly as pack() fills its words. A source code
// >= 2^bits (only the canonical form can hold one) sets kErrorCodeOutOfRange in *errors.
template <class Source>
SF_REPACK_HD uint32_t pack_code_word(const Source& src, const CodeLayout& layout, int64_t word,
                                     uint32_t* errors) {
  const WordPlace place = place_of_word(layout.bits, layout.k_blocks, word);
  const uint32_t mask = low_bits_mask(layout.bits);
  const int lanes = lanes_per_word(layout.bits);
  uint32_t out = 0;
  for (int lane = 0; lane < lanes; ++lane) {
    const BlockElement e = element_in_block(layout.bits, place.word_in_block, lane);
    const int64_t nn = place.row0 + e.row;
    const int64_t kk = place.col0 + e.col;
    uint32_t code = code_bias_of(layout.bits);
    if (nn < layout.n && kk < layout.k) {
      code = src.code(nn, layout.perm != nullptr ? layout.perm[kk] : kk);
      if (code > mask) {
        *errors |= kErrorCodeOutOfRange;
        code &= mask;  // keep the neighbours intact; the whole result is discarded anyway
      }
    }
    out |= code << (lane * layout.bits);
  }
  return out;
}

// What a metadata entry needs to know. Entries are [scale_rows][n_pad], row-major.
struct MetaLayout {
  int64_t n, n_pad;
  int64_t num_groups;     // real groups: ceil(k / group_size), 1 channelwise
  int64_t total_entries;  // scale_rows * n_pad
  int bits;
  DType dtype;            // kF16 or kBF16
  bool has_zero;          // write zero shifts and folds
};

struct MetaEntry {
  uint16_t scale;
  uint16_t zero_shift;  // plane 0 of zero_fold: an unsigned integer
  uint16_t zero_fold;   // plane 1
};

// Entry `index`: the scale rounded to the packed dtype and, with zero points, the zero point's
// shift and fold (format/zero_split.h) from the rounded scale, the fold rounded once to float and
// then to the dtype, as pack() does. Padding (groups past the real ones, columns >= n) is +0.0.
template <class Source>
SF_REPACK_HD MetaEntry pack_meta_entry(const Source& src, const MetaLayout& layout, int64_t index,
                                       uint32_t* errors) {
  MetaEntry out{0, 0, 0};
  const int64_t g = index / layout.n_pad;
  const int64_t nn = index % layout.n_pad;
  if (g >= layout.num_groups || nn >= layout.n) return out;
  const uint32_t scale_bits = bits_of(src.scale(g, nn));
  if (!is_finite_bits(scale_bits)) *errors |= kErrorScaleNotFinite;
  out.scale = dtype_bits_from_float_bits(scale_bits, layout.dtype);
  if (layout.has_zero) {
    const double zp = src.zero_point(g, nn, errors);
    const double scale = float_of(float_bits_from_dtype_bits(out.scale, layout.dtype));
    const format::ZeroSplit split = format::split_zero_point(zp, scale, layout.bits);
    out.zero_shift = static_cast<uint16_t>(split.shift);  // an unsigned integer, not dtype bits
    out.zero_fold =
        dtype_bits_from_float_bits(bits_of(static_cast<float>(split.fold)), layout.dtype);
  }
  return out;
}

}  // namespace sailfish::repack
