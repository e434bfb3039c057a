// Serialized prepacked weights (include/sailfish/packed_serialize.h documents the layout).
// Host code only: it builds without CUDA so the CPU tests and offline tools can use it.
#include "sailfish/packed_serialize.h"

#include <cstring>
#include <limits>
#include <utility>

namespace sailfish {

namespace {

constexpr uint8_t kMagic[4] = {'S', 'F', 'P', 'K'};
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;
constexpr uint32_t kFlagActOrder = 1u;

// Field offsets of the header; the comment in packed_serialize.h is the specification.
enum HeaderOffset : size_t {
  kOffMagic = 0,
  kOffSerializationVersion = 4,
  kOffFormatVersion = 8,
  kOffHeaderBytes = 12,
  kOffN = 16,
  kOffK = 24,
  kOffBits = 32,
  kOffGroupSize = 36,
  kOffGroupRows = 40,
  kOffZeroKind = 44,
  kOffScaleDtype = 48,
  kOffFlags = 52,
  kOffCodesBytes = 56,
  kOffScalesBytes = 64,
  kOffZeroFoldBytes = 72,
  kOffZeroPointsBytes = 80,
  kOffPermBytes = 88,
  kOffPayloadBytes = 96,
};
static_assert(kPackedPayloadChecksumOffset == 104 && kPackedHeaderChecksumOffset == 112 &&
                  kPackedHeaderBytes == 120,
              "header layout documented in packed_serialize.h");

// Little-endian stores and loads, byte by byte so the host's byte order never matters.
void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}
int32_t get_i32(const uint8_t* p) { return static_cast<int32_t>(get_u32(p)); }
int64_t get_i64(const uint8_t* p) { return static_cast<int64_t>(get_u64(p)); }

// Sizes in bytes of the five arrays, in payload order.
struct ArrayBytes {
  uint64_t codes = 0, scales = 0, zero_fold = 0, zero_points = 0, perm = 0;
  uint64_t total() const { return codes + scales + zero_fold + zero_points + perm; }
};

ArrayBytes expected_bytes(const PackedGeometry& geo, bool has_zero, bool act_order) {
  const uint64_t meta = static_cast<uint64_t>(geo.scale_rows * geo.n_pad);
  ArrayBytes b;
  b.codes = static_cast<uint64_t>(geo.code_bytes());
  b.scales = meta * 2;
  b.zero_fold = has_zero ? meta * 4 : 0;  // two u16 planes: shifts and folds
  b.zero_points = has_zero ? meta * 4 : 0;
  b.perm = act_order ? static_cast<uint64_t>(geo.k) * 4 : 0;
  return b;
}

bool known_zero_kind(int32_t v) {
  return v == int32_t(ZeroPointKind::kNone) || v == int32_t(ZeroPointKind::kInteger) ||
         v == int32_t(ZeroPointKind::kFloat);
}

// Writers and readers of the typed arrays, little-endian element by element.
void write_u16s(const std::vector<uint16_t>& from, uint8_t* to) {
  for (size_t i = 0; i < from.size(); ++i) {
    to[2 * i] = static_cast<uint8_t>(from[i]);
    to[2 * i + 1] = static_cast<uint8_t>(from[i] >> 8);
  }
}
void write_u32s(const uint32_t* from, size_t count, uint8_t* to) {
  for (size_t i = 0; i < count; ++i) put_u32(to + 4 * i, from[i]);
}
void read_u16s(const uint8_t* from, std::vector<uint16_t>* to) {
  for (size_t i = 0; i < to->size(); ++i) {
    (*to)[i] = static_cast<uint16_t>(from[2 * i] | (from[2 * i + 1] << 8));
  }
}
template <typename T>
void read_32bit(const uint8_t* from, std::vector<T>* to) {
  static_assert(sizeof(T) == 4, "32-bit elements");
  for (size_t i = 0; i < to->size(); ++i) {
    const uint32_t v = get_u32(from + 4 * i);
    std::memcpy(&(*to)[i], &v, 4);  // bit copy: float bits and two's-complement ints alike
  }
}

Status check_expectation(const PackedExpectation& e, int64_t n, int64_t k, int bits,
                         int group_size, ZeroPointKind zero_kind, DType scale_dtype,
                         bool act_order) {
  const char* what = "prepacked weight ";
  if (n != e.n) {
    return invalid_argument(what, "has N = ", n, " but the operator declares N = ", e.n);
  }
  if (k != e.k) {
    return invalid_argument(what, "has K = ", k, " but the operator declares K = ", e.k);
  }
  if (bits != e.bits) {
    return invalid_argument(what, "has bits = ", bits, " but the operator declares bits = ",
                            e.bits);
  }
  if (group_size != e.group_size) {
    return invalid_argument(what, "has block_size = ", group_size,
                            " but the operator declares block_size = ", e.group_size);
  }
  if (zero_kind != e.zero_kind) {
    return invalid_argument(what, "has zero points '", zero_point_kind_name(zero_kind),
                            "' but the operator declares '", zero_point_kind_name(e.zero_kind),
                            "' (which zero_points input it has)");
  }
  if (act_order != e.act_order) {
    return invalid_argument(what, act_order ? "has" : "has no",
                            " act-order permutation but the operator declares ",
                            e.act_order ? "a" : "no", " g_idx input");
  }
  if (scale_dtype != e.scale_dtype) {
    return invalid_argument(what, "was packed for ", dtype_name(scale_dtype),
                            " compute but this operator computes in ", dtype_name(e.scale_dtype),
                            " (from its activation type and accuracy_level); prepack it again");
  }
  return Status();
}

Status deserialize_impl(const uint8_t* data, size_t size, const PackedExpectation* expected,
                        PackedWeight* out) {
  if (out == nullptr) return invalid_argument("deserialize: out is null");
  if (data == nullptr && size > 0) return invalid_argument("deserialize: data is null");
  if (size < kPackedHeaderBytes) {
    return invalid_argument("prepacked weight is truncated: ", size, " bytes, but its header alone "
                            "takes ", kPackedHeaderBytes);
  }
  const uint8_t* h = data;
  if (std::memcmp(h + kOffMagic, kMagic, 4) != 0) {
    return invalid_argument("not a Sailfish prepacked weight: the first 4 bytes are not \"SFPK\"");
  }
  const uint32_t serialization_version = get_u32(h + kOffSerializationVersion);
  if (serialization_version != kPackedSerializationVersion) {
    return unsupported("prepacked weight has serialization version ", serialization_version,
                       "; this build reads version ", kPackedSerializationVersion,
                       " only: prepack it again with this build");
  }
  const uint32_t format_version = get_u32(h + kOffFormatVersion);
  if (format_version != static_cast<uint32_t>(kPackedFormatVersion)) {
    return unsupported("prepacked weight has packed format version ", format_version,
                       "; this build reads version ", kPackedFormatVersion,
                       " only: prepack it again with this build");
  }
  const uint32_t header_bytes = get_u32(h + kOffHeaderBytes);
  if (header_bytes != kPackedHeaderBytes) {
    return invalid_argument("prepacked weight declares a ", header_bytes,
                            "-byte header; version ", kPackedSerializationVersion, " has ",
                            kPackedHeaderBytes);
  }
  const uint64_t header_sum = packed_checksum(h, kPackedHeaderChecksumOffset);
  if (header_sum != get_u64(h + kPackedHeaderChecksumOffset)) {
    return invalid_argument("prepacked weight header is corrupted (header checksum mismatch)");
  }

  const int64_t n = get_i64(h + kOffN);
  const int64_t k = get_i64(h + kOffK);
  const int32_t bits = get_i32(h + kOffBits);
  const int32_t group_size = get_i32(h + kOffGroupSize);
  const int32_t group_rows = get_i32(h + kOffGroupRows);
  const int32_t zero_raw = get_i32(h + kOffZeroKind);
  const int32_t dtype_raw = get_i32(h + kOffScaleDtype);
  const uint32_t flags = get_u32(h + kOffFlags);
  if (!known_zero_kind(zero_raw)) {
    return invalid_argument("prepacked weight has zero kind ", zero_raw,
                            "; accepted: 0 (none), 1 (integer), 2 (float)");
  }
  if (dtype_raw != int32_t(DType::kF16) && dtype_raw != int32_t(DType::kBF16)) {
    return invalid_argument("prepacked weight has scale dtype ", dtype_raw,
                            "; accepted: 0 (fp16), 1 (bf16)");
  }
  if ((flags & ~kFlagActOrder) != 0) {
    return invalid_argument("prepacked weight has flags ", flags,
                            "; only bit 0 (act-order) is defined");
  }
  const auto zero_kind = static_cast<ZeroPointKind>(zero_raw);
  const auto scale_dtype = static_cast<DType>(dtype_raw);
  const bool act_order = (flags & kFlagActOrder) != 0;

  PackedWeight p;
  p.version = static_cast<int>(format_version);
  Status geometry = PackedGeometry::make(n, k, bits, group_size, &p.geometry);
  if (!geometry.ok()) {
    return Status(geometry.code(), "prepacked weight has a bad shape: " + geometry.message());
  }
  const PackedGeometry& geo = p.geometry;
  if (group_rows != geo.group_rows) {
    return invalid_argument("prepacked weight has group_rows ", group_rows, "; [n=", n, ", k=", k,
                            ", group_size=", group_size, "] gives ", geo.group_rows);
  }
  if (expected != nullptr) {
    SF_RETURN_IF_ERROR(check_expectation(*expected, n, k, bits, group_size, zero_kind,
                                         scale_dtype, act_order));
  }

  // Array sizes: each must be what the geometry implies.
  const ArrayBytes want = expected_bytes(geo, zero_kind != ZeroPointKind::kNone, act_order);
  const struct {
    const char* name;
    size_t offset;
    uint64_t want;
  } arrays[] = {{"codes", kOffCodesBytes, want.codes},
                {"scales", kOffScalesBytes, want.scales},
                {"zero_fold", kOffZeroFoldBytes, want.zero_fold},
                {"zero_points", kOffZeroPointsBytes, want.zero_points},
                {"perm", kOffPermBytes, want.perm}};
  for (const auto& a : arrays) {
    const uint64_t got = get_u64(h + a.offset);
    if (got != a.want) {
      return invalid_argument("prepacked weight declares ", got, " bytes of ", a.name,
                              "; its shape [n=", n, ", k=", k, ", bits=", bits,
                              ", group_size=", group_size, "] with zero kind ",
                              zero_point_kind_name(zero_kind), act_order ? " and act-order" : "",
                              " needs ", a.want);
    }
  }
  const uint64_t payload = get_u64(h + kOffPayloadBytes);
  if (payload != want.total()) {
    return invalid_argument("prepacked weight declares a payload of ", payload,
                            " bytes; its arrays add up to ", want.total());
  }
  const uint64_t available = size - kPackedHeaderBytes;
  if (available < payload) {
    return invalid_argument("prepacked weight is truncated: ", size, " bytes, but its header and "
                            "arrays take ", kPackedHeaderBytes + payload);
  }
  if (available > payload) {
    return invalid_argument("prepacked weight has ", available - payload, " trailing bytes after "
                            "its arrays (", size, " bytes; expected ", kPackedHeaderBytes + payload,
                            ")");
  }
  const uint8_t* body = data + kPackedHeaderBytes;
  if (packed_checksum(body, static_cast<size_t>(payload)) !=
      get_u64(h + kPackedPayloadChecksumOffset)) {
    return invalid_argument("prepacked weight payload is corrupted (payload checksum mismatch)");
  }

  p.scale_dtype = scale_dtype;
  p.zero_kind = zero_kind;
  const uint8_t* cursor = body;
  p.codes.assign(cursor, cursor + want.codes);
  cursor += want.codes;
  p.scales.resize(static_cast<size_t>(want.scales / 2));
  read_u16s(cursor, &p.scales);
  cursor += want.scales;
  p.zero_fold.resize(static_cast<size_t>(want.zero_fold / 2));
  read_u16s(cursor, &p.zero_fold);
  cursor += want.zero_fold;
  p.zero_points.resize(static_cast<size_t>(want.zero_points / 4));
  read_32bit(cursor, &p.zero_points);
  cursor += want.zero_points;
  p.perm.resize(static_cast<size_t>(want.perm / 4));
  read_32bit(cursor, &p.perm);
  // The checksum only proves the bytes are the ones written; validate() proves they make sense
  // (a permutation, ranges), so a blob forged with a matching checksum is still refused.
  Status valid = validate(p);
  if (!valid.ok()) {
    return Status(valid.code(), "prepacked weight is invalid: " + valid.message());
  }
  *out = std::move(p);
  return Status();
}

}  // namespace

uint64_t packed_checksum(const uint8_t* data, size_t size) {
  uint64_t hash = kFnvOffset;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    hash ^= get_u64(data + i);
    hash *= kFnvPrime;
  }
  for (; i < size; ++i) {
    hash ^= data[i];
    hash *= kFnvPrime;
  }
  return hash;
}

Status serialize(const PackedWeight& weight, std::vector<uint8_t>* out) {
  if (out == nullptr) return invalid_argument("serialize: out is null");
  SF_RETURN_IF_ERROR(validate(weight));
  const PackedGeometry& geo = weight.geometry;
  const bool act_order = weight.has_act_order();
  const ArrayBytes sizes = expected_bytes(geo, weight.zero_kind != ZeroPointKind::kNone, act_order);
  if (sizes.total() > std::numeric_limits<size_t>::max() - kPackedHeaderBytes) {
    return unsupported("serialize: the weight does not fit in memory on this host");
  }
  std::vector<uint8_t> bytes(kPackedHeaderBytes + static_cast<size_t>(sizes.total()));
  uint8_t* h = bytes.data();
  std::memcpy(h + kOffMagic, kMagic, 4);
  put_u32(h + kOffSerializationVersion, kPackedSerializationVersion);
  put_u32(h + kOffFormatVersion, static_cast<uint32_t>(weight.version));
  put_u32(h + kOffHeaderBytes, static_cast<uint32_t>(kPackedHeaderBytes));
  put_u64(h + kOffN, static_cast<uint64_t>(geo.n));
  put_u64(h + kOffK, static_cast<uint64_t>(geo.k));
  put_u32(h + kOffBits, static_cast<uint32_t>(geo.bits));
  put_u32(h + kOffGroupSize, static_cast<uint32_t>(geo.group_size));
  put_u32(h + kOffGroupRows, static_cast<uint32_t>(geo.group_rows));
  put_u32(h + kOffZeroKind, static_cast<uint32_t>(weight.zero_kind));
  put_u32(h + kOffScaleDtype, static_cast<uint32_t>(weight.scale_dtype));
  put_u32(h + kOffFlags, act_order ? kFlagActOrder : 0u);
  put_u64(h + kOffCodesBytes, sizes.codes);
  put_u64(h + kOffScalesBytes, sizes.scales);
  put_u64(h + kOffZeroFoldBytes, sizes.zero_fold);
  put_u64(h + kOffZeroPointsBytes, sizes.zero_points);
  put_u64(h + kOffPermBytes, sizes.perm);
  put_u64(h + kOffPayloadBytes, sizes.total());

  uint8_t* cursor = h + kPackedHeaderBytes;
  if (!weight.codes.empty()) std::memcpy(cursor, weight.codes.data(), weight.codes.size());
  cursor += sizes.codes;
  write_u16s(weight.scales, cursor);
  cursor += sizes.scales;
  write_u16s(weight.zero_fold, cursor);
  cursor += sizes.zero_fold;
  static_assert(sizeof(float) == 4, "IEEE-754 binary32 floats");
  std::vector<uint32_t> words(weight.zero_points.size());
  if (!words.empty()) std::memcpy(words.data(), weight.zero_points.data(), words.size() * 4);
  write_u32s(words.data(), words.size(), cursor);
  cursor += sizes.zero_points;
  words.resize(weight.perm.size());
  if (!words.empty()) std::memcpy(words.data(), weight.perm.data(), words.size() * 4);
  write_u32s(words.data(), words.size(), cursor);

  put_u64(h + kPackedPayloadChecksumOffset,
          packed_checksum(h + kPackedHeaderBytes, static_cast<size_t>(sizes.total())));
  put_u64(h + kPackedHeaderChecksumOffset, packed_checksum(h, kPackedHeaderChecksumOffset));
  *out = std::move(bytes);
  return Status();
}

Status deserialize(const uint8_t* data, size_t size, PackedWeight* out) {
  return deserialize_impl(data, size, nullptr, out);
}

Status deserialize(const uint8_t* data, size_t size, const PackedExpectation& expected,
                   PackedWeight* out) {
  return deserialize_impl(data, size, &expected, out);
}

}  // namespace sailfish
