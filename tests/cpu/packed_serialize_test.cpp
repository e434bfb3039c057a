// Serialized prepacked weights: exact round trips over every format, and every kind of damage or
// mismatch refused with a message that names it (never a garbage weight).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "sailfish/packed_format.h"
#include "sailfish/packed_serialize.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::RandomWeightSpec;
using testing::random_weight;
using testing::test_seed;

// The arrays compared as bytes (float zero points included: a NaN must not compare unequal).
template <typename T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(),
                                                           a.size() * sizeof(T)) == 0);
}

::testing::AssertionResult same_packed(const PackedWeight& a, const PackedWeight& b) {
  const PackedGeometry &x = a.geometry, &y = b.geometry;
  if (a.version != b.version) return ::testing::AssertionFailure() << "version";
  if (x.n != y.n || x.k != y.k || x.bits != y.bits || x.group_size != y.group_size ||
      x.n_pad != y.n_pad || x.k_pad != y.k_pad || x.n_blocks != y.n_blocks ||
      x.k_blocks != y.k_blocks || x.group_rows != y.group_rows || x.scale_rows != y.scale_rows) {
    return ::testing::AssertionFailure() << "geometry";
  }
  if (a.scale_dtype != b.scale_dtype) return ::testing::AssertionFailure() << "scale dtype";
  if (a.zero_kind != b.zero_kind) return ::testing::AssertionFailure() << "zero kind";
  if (!same_bytes(a.codes, b.codes)) return ::testing::AssertionFailure() << "codes";
  if (!same_bytes(a.scales, b.scales)) return ::testing::AssertionFailure() << "scales";
  if (!same_bytes(a.zero_fold, b.zero_fold)) return ::testing::AssertionFailure() << "zero_fold";
  if (!same_bytes(a.zero_points, b.zero_points)) {
    return ::testing::AssertionFailure() << "zero_points";
  }
  if (!same_bytes(a.perm, b.perm)) return ::testing::AssertionFailure() << "perm";
  return ::testing::AssertionSuccess();
}

PackedExpectation expectation_of(const PackedWeight& p) {
  PackedExpectation e;
  e.n = p.geometry.n;
  e.k = p.geometry.k;
  e.bits = p.geometry.bits;
  e.group_size = p.geometry.group_size;
  e.zero_kind = p.zero_kind;
  e.scale_dtype = p.scale_dtype;
  e.act_order = p.has_act_order();
  return e;
}

class SerializeRoundTrip
    : public ::testing::TestWithParam<std::tuple<int, int, ZeroPointKind, bool, DType>> {};

TEST_P(SerializeRoundTrip, DeserializeOfSerializeIsIdentity) {
  const auto [bits, group_size, zero_kind, act_order, dtype] = GetParam();
  std::mt19937_64 rng(test_seed() + 61);
  const int64_t shapes[][2] = {{64, 64}, {72, 40}, {1, 300}, {130, 520}};
  for (const auto& shape : shapes) {
    RandomWeightSpec spec;
    spec.n = shape[0];
    spec.k = shape[1];
    spec.bits = bits;
    spec.group_size = group_size;
    spec.zero_kind = zero_kind;
    spec.act_order = act_order;
    spec.scale_dtype = dtype;
    PackedWeight packed;
    ASSERT_TRUE(pack(random_weight(rng, spec), dtype, &packed).ok());
    std::vector<uint8_t> bytes;
    Status st = serialize(packed, &bytes);
    ASSERT_TRUE(st.ok()) << st.to_string();
    PackedWeight back;
    st = deserialize(bytes.data(), bytes.size(), &back);
    ASSERT_TRUE(st.ok()) << st.to_string();
    EXPECT_TRUE(same_packed(packed, back)) << "n=" << spec.n << " k=" << spec.k;
    PackedWeight checked;
    st = deserialize(bytes.data(), bytes.size(), expectation_of(packed), &checked);
    ASSERT_TRUE(st.ok()) << st.to_string();
    EXPECT_TRUE(same_packed(packed, checked));
    // Deterministic: serializing the loaded weight writes the very same bytes.
    std::vector<uint8_t> again;
    ASSERT_TRUE(serialize(back, &again).ok());
    EXPECT_EQ(again, bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllFormats, SerializeRoundTrip,
    ::testing::Combine(::testing::Values(4, 8), ::testing::Values(16, 64, 256, -1),
                       ::testing::Values(ZeroPointKind::kNone, ZeroPointKind::kInteger,
                                         ZeroPointKind::kFloat),
                       ::testing::Bool(), ::testing::Values(DType::kF16, DType::kBF16)));

TEST(SerializeFormat, HeaderFieldsAreWhereTheSpecSays) {
  std::mt19937_64 rng(test_seed() + 62);
  RandomWeightSpec spec;
  spec.n = 100;
  spec.k = 200;
  spec.group_size = 32;
  spec.zero_kind = ZeroPointKind::kInteger;
  spec.act_order = true;
  PackedWeight p;
  ASSERT_TRUE(pack(random_weight(rng, spec), DType::kBF16, &p).ok());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(serialize(p, &bytes).ok());
  auto u32 = [&](size_t off) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(bytes[off + i]) << (8 * i);
    return v;
  };
  auto u64 = [&](size_t off) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(bytes[off + i]) << (8 * i);
    return v;
  };
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "SFPK");
  EXPECT_EQ(u32(4), kPackedSerializationVersion);
  EXPECT_EQ(u32(8), uint32_t(kPackedFormatVersion));
  EXPECT_EQ(u32(12), kPackedHeaderBytes);
  EXPECT_EQ(u64(16), 100u);
  EXPECT_EQ(u64(24), 200u);
  EXPECT_EQ(u32(32), 4u);
  EXPECT_EQ(u32(36), 32u);
  EXPECT_EQ(u32(40), 32u);
  EXPECT_EQ(u32(44), uint32_t(ZeroPointKind::kInteger));
  EXPECT_EQ(u32(48), uint32_t(DType::kBF16));
  EXPECT_EQ(u32(52), 1u);
  EXPECT_EQ(u64(56), p.codes.size());
  EXPECT_EQ(u64(64), p.scales.size() * 2);
  EXPECT_EQ(u64(72), p.zero_fold.size() * 2);
  EXPECT_EQ(u64(80), p.zero_points.size() * 4);
  EXPECT_EQ(u64(88), p.perm.size() * 4);
  EXPECT_EQ(u64(96), bytes.size() - kPackedHeaderBytes);
  EXPECT_EQ(u64(104), packed_checksum(bytes.data() + 120, bytes.size() - 120));
  EXPECT_EQ(u64(112), packed_checksum(bytes.data(), 112));
  // Codes come first in the payload, as raw bytes.
  EXPECT_EQ(0, std::memcmp(bytes.data() + 120, p.codes.data(), p.codes.size()));
}

TEST(SerializeFormat, ChecksumIsFnv1aOverLittleEndianWords) {
  // Hand-computed: FNV-1a 64 of nothing is the offset basis; one word, then one tail byte.
  EXPECT_EQ(packed_checksum(nullptr, 0), 0xcbf29ce484222325ull);
  const uint8_t data[9] = {1, 0, 0, 0, 0, 0, 0, 0, 7};
  uint64_t h = 0xcbf29ce484222325ull;
  h = (h ^ 1u) * 0x100000001b3ull;
  EXPECT_EQ(packed_checksum(data, 8), h);
  h = (h ^ 7u) * 0x100000001b3ull;
  EXPECT_EQ(packed_checksum(data, 9), h);
}

// ---- damage and mismatches ----------------------------------------------------------------------

PackedWeight sample_weight(ZeroPointKind zero_kind = ZeroPointKind::kInteger,
                           bool act_order = true) {
  std::mt19937_64 rng(test_seed() + 63);
  RandomWeightSpec spec;
  spec.n = 96;
  spec.k = 160;
  spec.group_size = 32;
  spec.zero_kind = zero_kind;
  spec.act_order = act_order;
  PackedWeight p;
  EXPECT_TRUE(pack(random_weight(rng, spec), DType::kBF16, &p).ok());
  return p;
}

void put_u32(std::vector<uint8_t>& b, size_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(std::vector<uint8_t>& b, size_t off, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get_u64(const std::vector<uint8_t>& b, size_t off) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(b[off + i]) << (8 * i);
  return v;
}
// Recomputes the header checksum so that an edit reaches the check behind it.
void reseal_header(std::vector<uint8_t>& b) {
  put_u64(b, kPackedHeaderChecksumOffset, packed_checksum(b.data(), kPackedHeaderChecksumOffset));
}
void reseal_all(std::vector<uint8_t>& b) {
  put_u64(b, kPackedPayloadChecksumOffset,
          packed_checksum(b.data() + kPackedHeaderBytes, b.size() - kPackedHeaderBytes));
  reseal_header(b);
}

struct Damage {
  std::string name;
  std::function<void(std::vector<uint8_t>&, PackedExpectation&)> apply;
  std::string expect_in_message;
  StatusCode expect_code = StatusCode::kInvalidArgument;
  bool with_expectation = true;
};

std::vector<Damage> damages() {
  using E = PackedExpectation;
  using B = std::vector<uint8_t>;
  std::vector<Damage> d;
  d.push_back({"truncated inside the header", [](B& b, E&) { b.resize(50); }, "truncated"});
  d.push_back({"empty", [](B& b, E&) { b.clear(); }, "truncated"});
  d.push_back({"truncated payload", [](B& b, E&) { b.pop_back(); }, "truncated"});
  d.push_back({"wrong magic", [](B& b, E&) { b[0] = 'X'; }, "SFPK"});
  d.push_back({"wrong serialization version",
               [](B& b, E&) { put_u32(b, 4, kPackedSerializationVersion + 1); },
               "serialization version", StatusCode::kUnsupported});
  d.push_back({"wrong format version",
               [](B& b, E&) { put_u32(b, 8, uint32_t(kPackedFormatVersion) + 1); },
               "packed format version", StatusCode::kUnsupported});
  d.push_back({"wrong header size", [](B& b, E&) { put_u32(b, 12, 128); }, "-byte header"});
  d.push_back({"header byte flipped (N)", [](B& b, E&) { b[16] ^= 0x40; }, "header checksum"});
  d.push_back({"declared N differs from the attributes", [](B&, E& e) { e.n += 64; }, "N ="});
  d.push_back({"declared K differs from the attributes", [](B&, E& e) { e.k -= 1; }, "K ="});
  d.push_back({"declared bits differ", [](B&, E& e) { e.bits = 8; }, "bits ="});
  d.push_back({"declared block_size differs", [](B&, E& e) { e.group_size = 64; },
               "block_size ="});
  d.push_back({"zero kind mismatch", [](B&, E& e) { e.zero_kind = ZeroPointKind::kFloat; },
               "zero points"});
  d.push_back({"act-order mismatch", [](B&, E& e) { e.act_order = false; }, "g_idx"});
  d.push_back({"compute dtype mismatch", [](B&, E& e) { e.scale_dtype = DType::kF16; },
               "compute"});
  d.push_back({"header shape consistent but not the payload's",
               [](B& b, E& e) {
                 put_u64(b, 16, 160);  // N 96 -> 160: more scale and code bytes than written
                 reseal_header(b);
                 e.n = 160;
               },
               "bytes of codes"});
  d.push_back({"array sizes shuffled (total kept)",
               [](B& b, E&) {
                 put_u64(b, 56, get_u64(b, 56) - 4);
                 put_u64(b, 64, get_u64(b, 64) + 4);
                 reseal_header(b);
               },
               "bytes of codes"});
  d.push_back({"payload total wrong",
               [](B& b, E&) {
                 put_u64(b, 96, get_u64(b, 96) + 8);
                 reseal_header(b);
               },
               "payload of"});
  d.push_back({"group_rows inconsistent",
               [](B& b, E&) {
                 put_u32(b, 40, 64);
                 reseal_header(b);
               },
               "group_rows"});
  d.push_back({"unknown zero kind",
               [](B& b, E&) {
                 put_u32(b, 44, 7);
                 reseal_header(b);
               },
               "zero kind 7"});
  d.push_back({"unknown scale dtype (fp32)",
               [](B& b, E&) {
                 put_u32(b, 48, uint32_t(DType::kF32));
                 reseal_header(b);
               },
               "scale dtype"});
  d.push_back({"unknown flag bits",
               [](B& b, E&) {
                 put_u32(b, 52, 3);
                 reseal_header(b);
               },
               "flags"});
  d.push_back({"bad bits in header",
               [](B& b, E& e) {
                 put_u32(b, 32, 3);
                 reseal_header(b);
                 e.bits = 3;
               },
               "bad shape"});
  d.push_back({"flipped payload byte", [](B& b, E&) { b[kPackedHeaderBytes + 777] ^= 0x01; },
               "payload checksum"});
  d.push_back({"flipped last payload byte", [](B& b, E&) { b.back() ^= 0x80; },
               "payload checksum"});
  d.push_back({"trailing bytes", [](B& b, E&) { b.push_back(0); }, "trailing"});
  d.push_back({"forged: checksums fine, perm not a permutation",
               [](B& b, E&) {
                 // The last 8 bytes are perm[k-2], perm[k-1]: make them equal.
                 std::memcpy(b.data() + b.size() - 4, b.data() + b.size() - 8, 4);
                 reseal_all(b);
               },
               "not a permutation"});
  d.push_back({"wrong version without an expectation",
               [](B& b, E&) { put_u32(b, 8, 0); }, "packed format version",
               StatusCode::kUnsupported, false});
  d.push_back({"flipped payload byte without an expectation",
               [](B& b, E&) { b[kPackedHeaderBytes] ^= 0x10; }, "payload checksum",
               StatusCode::kInvalidArgument, false});
  return d;
}

TEST(SerializeDamage, EveryCaseIsRefusedWithAClearMessage) {
  const PackedWeight good = sample_weight();
  std::vector<uint8_t> pristine;
  ASSERT_TRUE(serialize(good, &pristine).ok());
  {
    PackedWeight ok;
    ASSERT_TRUE(deserialize(pristine.data(), pristine.size(), expectation_of(good), &ok).ok());
  }
  const std::vector<Damage> cases = damages();
  ASSERT_GE(cases.size(), 8u);
  for (const Damage& c : cases) {
    std::vector<uint8_t> bytes = pristine;
    PackedExpectation expected = expectation_of(good);
    c.apply(bytes, expected);
    // A sentinel that must survive: *out is untouched on failure.
    PackedWeight out;
    out.codes = {0xab};
    const Status st = c.with_expectation
                          ? deserialize(bytes.data(), bytes.size(), expected, &out)
                          : deserialize(bytes.data(), bytes.size(), &out);
    EXPECT_FALSE(st.ok()) << c.name << ": accepted";
    if (st.ok()) continue;
    EXPECT_EQ(st.code(), c.expect_code) << c.name << ": " << st.to_string();
    EXPECT_NE(st.message().find(c.expect_in_message), std::string::npos)
        << c.name << ": message \"" << st.message() << "\" lacks \"" << c.expect_in_message
        << "\"";
    EXPECT_EQ(out.codes, std::vector<uint8_t>{0xab}) << c.name << ": *out was modified";
  }
}

TEST(SerializeDamage, EverySingleByteFlipIsCaught) {
  // Symmetric, no act-order: the smallest payload, so a flip of every byte stays fast.
  const PackedWeight good = sample_weight(ZeroPointKind::kNone, false);
  std::vector<uint8_t> pristine;
  ASSERT_TRUE(serialize(good, &pristine).ok());
  for (size_t i = 0; i < pristine.size(); i += (i < kPackedHeaderBytes ? 1 : 7)) {
    std::vector<uint8_t> bytes = pristine;
    bytes[i] ^= 0x04;
    PackedWeight out;
    EXPECT_FALSE(deserialize(bytes.data(), bytes.size(), &out).ok()) << "flip at byte " << i;
  }
}

TEST(SerializeDamage, BadArguments) {
  PackedWeight out;
  EXPECT_FALSE(deserialize(nullptr, 10, &out).ok());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(serialize(sample_weight(), &bytes).ok());
  EXPECT_FALSE(deserialize(bytes.data(), bytes.size(), nullptr).ok());
  EXPECT_FALSE(serialize(sample_weight(), nullptr).ok());
  // serialize refuses an invalid weight rather than writing it.
  PackedWeight broken = sample_weight();
  broken.scales.pop_back();
  const Status st = serialize(broken, &bytes);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("scales"), std::string::npos) << st.to_string();
}

}  // namespace
}  // namespace sailfish
