// The serialized prepacked form of a PackedWeight: what a model stores so that loading it skips
// import and repacking (Sailfish's analogue of ONNX Runtime's MatMulNBits `weight_prepacked`).
// Host only, no CUDA needed: an offline tool can write it and a CPU test can check it.
//
// Layout: a fixed 120-byte header, then the arrays of the PackedWeight back to back, every value
// little-endian whatever the host:
//
//   offset size  field
//        0    4  magic "SFPK"
//        4    4  u32 serialization version (kPackedSerializationVersion)
//        8    4  u32 packed format version (kPackedFormatVersion)
//       12    4  u32 header bytes (kPackedHeaderBytes)
//       16    8  i64 n                 24  8  i64 k
//       32    4  i32 bits              36  4  i32 group_size (block_size; -1 channelwise)
//       40    4  i32 group_rows (derived; stored as a cross-check)
//       44    4  i32 zero kind (ZeroPointKind)
//       48    4  i32 scale dtype (DType: fp16 or bf16)
//       52    4  u32 flags: bit 0 act-order; every other bit must be zero
//       56   40  u64 byte sizes of codes, scales, zero_fold, zero_points, perm
//       96    8  u64 payload bytes (the sum of the five)
//      104    8  u64 payload checksum
//      112    8  u64 header checksum, over bytes [0, 112)
//      120       payload: codes (bytes), scales (u16), zero_fold (u16, two planes: shifts then
//                folds), zero_points (f32 bits),
//                perm (i32), each array immediately after the previous one
//
// Checksums are FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3) applied to the
// data read as little-endian 64-bit words, with the last size % 8 bytes folded in one at a time:
// eight times faster than the bytewise form on multi-GB models, and since every step (xor, then
// multiply by an odd prime) is a bijection, any single corrupted word always changes the result.
//
// deserialize() refuses, with a message that names the field and both values, anything that is
// not exactly what serialize() writes for a valid PackedWeight: short or long input, wrong magic,
// an unknown serialization or format version, a corrupted header or payload, array sizes that do
// not match the geometry, and (given a PackedExpectation) any difference from the attributes the
// caller declares. It finishes with validate(PackedWeight). It never returns garbage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sailfish/packed_format.h"

namespace sailfish {

constexpr uint32_t kPackedSerializationVersion = 1;
constexpr size_t kPackedHeaderBytes = 120;
constexpr size_t kPackedHeaderChecksumOffset = 112;
constexpr size_t kPackedPayloadChecksumOffset = 104;

// What the loader was told the weight is (for MatMulNBits: the node's attributes, which optional
// inputs it has, and the compute dtype the activation type implies).
struct PackedExpectation {
  int64_t n = 0, k = 0;
  int bits = 4;
  int group_size = 128;
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  DType scale_dtype = DType::kBF16;
  bool act_order = false;
};

// The checksum described above, over size bytes.
uint64_t packed_checksum(const uint8_t* data, size_t size);

// Writes the serialized form of a valid packed weight (validate() is checked first) into *out,
// replacing its contents.
Status serialize(const PackedWeight& weight, std::vector<uint8_t>* out);

// Reads a serialized packed weight. *out is untouched on any error.
Status deserialize(const uint8_t* data, size_t size, PackedWeight* out);
// Same, and every header field must also equal the expectation.
Status deserialize(const uint8_t* data, size_t size, const PackedExpectation& expected,
                   PackedWeight* out);

}  // namespace sailfish
