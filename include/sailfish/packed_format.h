// The Sailfish packed weight format, version 2: the one layout that every tier reads. (Version 1
// stored one zero fold, (2^(bits-1) - zp) * s; version 2 splits the zero point, see zero_fold.)
// docs/FORMAT.md is the specification; the CPU packer here is its executable definition and the GPU
// repack kernel must produce the same bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "sailfish/quantized_weight.h"

namespace sailfish {

constexpr int kPackedFormatVersion = 2;
constexpr int kPackBlockN = 64;  // output rows per block
constexpr int kPackBlockK = 64;  // input columns per block

// Geometry of a packed weight; everything here derives from (n, k, bits, group_size).
struct PackedGeometry {
  int64_t n = 0, k = 0;          // logical shape
  int bits = 4;
  int group_size = 128;          // as given; kChannelwise allowed
  int64_t n_pad = 0, k_pad = 0;  // rounded up to multiples of 64
  int64_t n_blocks = 0, k_blocks = 0;
  int64_t group_rows = 0;        // effective group size in packed rows (k_pad for channelwise)
  int64_t scale_rows = 0;        // ceil(k_pad / group_rows): rows of the scale tensors

  static Status make(int64_t n, int64_t k, int bits, int group_size, PackedGeometry* out);
  int64_t block_bytes() const { return int64_t(kPackBlockN) * kPackBlockK * bits / 8; }
  int64_t code_bytes() const { return n_blocks * k_blocks * block_bytes(); }
  // Byte offset of element (row nn, packed column kk) and, for int4, whether it is the nibble's
  // position (0..7) inside its 32-bit word; see docs/FORMAT.md for the derivation.
  int64_t word_index(int64_t nn, int64_t kk) const;  // 32-bit word in the whole tensor
  int lane_position(int64_t nn, int64_t kk) const;   // nibble (int4) or byte (int8) in the word
};

// Host copy of a packed weight. The device holds the same arrays (see sailfish.h).
struct PackedWeight {
  int version = kPackedFormatVersion;
  PackedGeometry geometry;
  DType scale_dtype = DType::kBF16;  // kF16 or kBF16: the activation type it serves
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  std::vector<uint8_t> codes;        // geometry.code_bytes()
  std::vector<uint16_t> scales;      // [scale_rows][n_pad], bits of scale_dtype
  // Two planes of [scale_rows][n_pad]: shifts, then folds. shift (a u16 integer) is the integer
  // nearest zp in the code range; fold (bits of scale_dtype) is (shift - zp) * s rounded once, so
  // W = (q - shift) * s + fold: one fused multiply-add after an exact subtraction
  // (src/format/zero_split.h). Integer zero points have fold +0.0. Empty when zero_kind == kNone.
  std::vector<uint16_t> zero_fold;
  // [scale_rows][n_pad] the zero points themselves (float32, exact), kept so unpack is lossless.
  // Not uploaded to the device. Empty when zero_kind == kNone.
  std::vector<float> zero_points;
  // Act-order: packed row r holds input row perm[r] (stable sort of g_idx). Empty when none.
  std::vector<int32_t> perm;

  bool has_act_order() const { return !perm.empty(); }
};

// Packs a canonical weight. Scales (and zero folds) are rounded to scale_dtype; pack a weight whose
// scales are exactly representable (quantize_rtn does that) to make unpack(pack(w)) == w.
Status pack(const QuantizedWeight& w, DType scale_dtype, PackedWeight* out);
// Exact inverse of pack (scales come back as their scale_dtype values).
Status unpack(const PackedWeight& p, QuantizedWeight* out);
// Checks that a geometry is the one PackedGeometry::make gives for its n, k, bits and group_size,
// derived fields included: the kernels index with n_pad, k_blocks and scale_rows as given.
Status validate(const PackedGeometry& g);
// Every field equal: the four make() takes and the six it derives.
bool same_geometry(const PackedGeometry& a, const PackedGeometry& b);
// Checks sizes, version and ranges of a packed weight (used before upload and on deserialize).
Status validate(const PackedWeight& p);

// The stable argsort of g_idx used by pack (exposed for the GPU repack and tests).
Status act_order_permutation(const std::vector<int32_t>& g_idx, int64_t k, int64_t group_rows,
                             int64_t num_groups, std::vector<int32_t>* perm);

}  // namespace sailfish
