// The GPU repack's host+device building blocks, checked on the host (no GPU needed):
//  * the inverse layout mapping against PackedGeometry::word_index / lane_position, exhaustively;
//  * the fp16 / bf16 conversions against float_to_bits / bits_to_float of quantize.cpp;
//  * the per-word and per-entry functions the kernels run, driven over every word of a weight
//    through each format's reader, against the CPU path import_<format> -> pack.
// The last one is the whole repack algorithm minus the CUDA launch; tests/gpu/device_pack_test.cu
// checks the launch on a device.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "repack/dtype_convert.h"
#include "repack/layout_inverse.h"
#include "repack/pack_element.h"
#include "repack/source_readers.h"
#include "sailfish/importers.h"
#include "sailfish/packed_format.h"
#include "sailfish/quantize.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::RandomWeightSpec;
using testing::random_weight;
using testing::test_seed;

// The helpers are constexpr: usable in constant expressions, hence the same code on both sides.
static_assert(repack::kBlockRows == kPackBlockN && repack::kBlockCols == kPackBlockK,
              "the inverse mapping assumes the packed block shape");
static_assert(repack::words_per_block(4) == 512 && repack::words_per_block(8) == 1024,
              "a 64 x 64 block is 2 KiB (int4) or 4 KiB (int8)");
static_assert(repack::element_in_block(4, 0, 0).row == 0 &&
                  repack::element_in_block(4, 0, 0).col == 0,
              "word 0, lane 0 holds element (0, 0)");

// ---- inverse mapping ----------------------------------------------------------------------------

TEST(RepackMapping, InverseOfEveryElementOfABlock) {
  for (int bits : {4, 8}) {
    PackedGeometry geo;
    ASSERT_TRUE(PackedGeometry::make(64, 64, bits, 64, &geo).ok());
    for (int r = 0; r < 64; ++r) {
      for (int c = 0; c < 64; ++c) {
        const int64_t word = geo.word_index(r, c);
        const int lane = geo.lane_position(r, c);
        ASSERT_GE(word, 0);
        ASSERT_LT(word, repack::words_per_block(bits));
        const repack::BlockElement e =
            repack::element_in_block(bits, static_cast<int>(word), lane);
        ASSERT_EQ(e.row, r) << "bits " << bits << " element (" << r << ", " << c << ")";
        ASSERT_EQ(e.col, c) << "bits " << bits << " element (" << r << ", " << c << ")";
      }
    }
  }
}

// The other direction: every slot of a block names an element that maps back to that slot, so the
// per-word kernel writes each slot exactly once and covers the whole block.
TEST(RepackMapping, EverySlotOfABlockMapsBack) {
  for (int bits : {4, 8}) {
    PackedGeometry geo;
    ASSERT_TRUE(PackedGeometry::make(64, 64, bits, 64, &geo).ok());
    std::vector<int> seen(64 * 64, 0);
    for (int word = 0; word < repack::words_per_block(bits); ++word) {
      for (int lane = 0; lane < repack::lanes_per_word(bits); ++lane) {
        const repack::BlockElement e = repack::element_in_block(bits, word, lane);
        ASSERT_TRUE(e.row >= 0 && e.row < 64 && e.col >= 0 && e.col < 64);
        ASSERT_EQ(geo.word_index(e.row, e.col), word) << "bits " << bits << " lane " << lane;
        ASSERT_EQ(geo.lane_position(e.row, e.col), lane) << "bits " << bits << " word " << word;
        ++seen[static_cast<size_t>(e.row * 64 + e.col)];
      }
    }
    for (int count : seen) ASSERT_EQ(count, 1);
  }
}

// Whole tensors of several blocks (padded both ways): block order and in-block offsets.
TEST(RepackMapping, EveryWordOfATensorMapsBack) {
  const int64_t shapes[][2] = {{130, 200}, {64, 320}, {200, 64}};
  for (int bits : {4, 8}) {
    for (const auto& shape : shapes) {
      PackedGeometry geo;
      ASSERT_TRUE(PackedGeometry::make(shape[0], shape[1], bits, 32, &geo).ok());
      const int64_t words = geo.code_bytes() / 4;
      for (int64_t word = 0; word < words; ++word) {
        const repack::WordPlace place = repack::place_of_word(bits, geo.k_blocks, word);
        for (int lane = 0; lane < repack::lanes_per_word(bits); ++lane) {
          const repack::BlockElement e = repack::element_in_block(bits, place.word_in_block, lane);
          const int64_t nn = place.row0 + e.row, kk = place.col0 + e.col;
          ASSERT_LT(nn, geo.n_pad);
          ASSERT_LT(kk, geo.k_pad);
          ASSERT_EQ(geo.word_index(nn, kk), word) << "shape " << shape[0] << "x" << shape[1];
          ASSERT_EQ(geo.lane_position(nn, kk), lane);
        }
      }
    }
  }
}

// ---- dtype conversions --------------------------------------------------------------------------

uint32_t float_bits(float value) {
  uint32_t u;
  std::memcpy(&u, &value, sizeof(u));
  return u;
}
float bits_float(uint32_t u) {
  float value;
  std::memcpy(&value, &u, sizeof(value));
  return value;
}

TEST(RepackConvert, EverySixteenBitPatternWidensLikeThePacker) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    for (DType dtype : {DType::kF16, DType::kBF16}) {
      ASSERT_EQ(repack::float_bits_from_dtype_bits(bits, dtype),
                float_bits(bits_to_float(bits, dtype)))
          << dtype_name(dtype) << " bits 0x" << std::hex << h;
    }
  }
}

::testing::AssertionResult narrows_like_packer(uint32_t u) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    const uint16_t got = repack::dtype_bits_from_float_bits(u, dtype);
    const uint16_t want = float_to_bits(bits_float(u), dtype);
    if (got != want) {
      return ::testing::AssertionFailure() << dtype_name(dtype) << " from float bits 0x"
                                           << std::hex << u << ": 0x" << got << ", packer 0x"
                                           << want;
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(RepackConvert, FloatsNarrowLikeThePacker) {
  // A sweep over the whole float32 space (both signs, NaNs and infinities included).
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4099) {
    ASSERT_TRUE(narrows_like_packer(static_cast<uint32_t>(u)));
  }
  // Every rounding boundary of both types: each 16-bit value's float and its neighbours, the
  // midpoints to the next value, and one float ulp either side of them.
  for (uint32_t x = 0; x < 65536; ++x) {
    for (uint32_t d : {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      ASSERT_TRUE(narrows_like_packer((x << 16) + d));  // bf16 boundaries
    }
    const uint32_t base = float_bits(bits_to_float(static_cast<uint16_t>(x), DType::kF16));
    for (uint32_t d : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu}) {
      ASSERT_TRUE(narrows_like_packer(base + d));  // fp16 normal boundaries
      ASSERT_TRUE(narrows_like_packer(base - d));
    }
  }
  // fp16 subnormal results: the rounding bit moves with the exponent. Walk every exponent that
  // lands there with the bits around that position in every state.
  for (uint32_t exponent = 96; exponent <= 113; ++exponent) {
    const int round_bit = exponent >= 103 ? static_cast<int>(125 - exponent) : 22;
    for (uint32_t high = 0; high < 64; ++high) {
      for (uint32_t pattern = 0; pattern < 8; ++pattern) {
        // bits round_bit + 1 (kept parity), round_bit (half), and "anything below" set or not
        const uint32_t parity = (pattern >> 2) & 1u, half = (pattern >> 1) & 1u;
        const uint32_t below = pattern & 1u;
        uint32_t mantissa = (high << 17) & 0x7fffffu;
        if (round_bit + 1 < 23) mantissa |= parity << (round_bit + 1);
        mantissa |= half << round_bit;
        if (round_bit > 0) mantissa |= below;
        mantissa &= 0x7fffffu;
        for (uint32_t sign : {0u, 0x80000000u}) {
          ASSERT_TRUE(narrows_like_packer(sign | (exponent << 23) | mantissa));
        }
      }
    }
  }
  // A random sample for whatever the structure above misses.
  std::mt19937_64 rng(test_seed() + 71);
  for (int i = 0; i < 1000000; ++i) {
    ASSERT_TRUE(narrows_like_packer(static_cast<uint32_t>(rng())));
  }
}

// ---- the repack algorithm on the host, per format -----------------------------------------------

// Runs the kernels' per-item functions over every word and entry, on the host.
template <class Source>
PackedWeight emulate_repack(const Source& src, const PackedGeometry& geo, int64_t num_groups,
                            ZeroPointKind zero_kind, const std::vector<int32_t>& perm,
                            DType dtype, uint32_t* errors) {
  PackedWeight p;
  p.geometry = geo;
  p.scale_dtype = dtype;
  p.zero_kind = zero_kind;
  p.perm = perm;
  repack::CodeLayout codes{};
  codes.n = geo.n;
  codes.k = geo.k;
  codes.k_blocks = geo.k_blocks;
  codes.total_words = geo.code_bytes() / 4;
  codes.bits = geo.bits;
  codes.perm = perm.empty() ? nullptr : perm.data();
  p.codes.resize(static_cast<size_t>(geo.code_bytes()));
  for (int64_t word = 0; word < codes.total_words; ++word) {
    const uint32_t value = repack::pack_code_word(src, codes, word, errors);
    std::memcpy(p.codes.data() + word * 4, &value, 4);  // little-endian, as the device stores it
  }
  repack::MetaLayout meta{};
  meta.n = geo.n;
  meta.n_pad = geo.n_pad;
  meta.num_groups = num_groups;
  meta.total_entries = geo.scale_rows * geo.n_pad;
  meta.bits = geo.bits;
  meta.dtype = dtype;
  meta.has_zero = zero_kind != ZeroPointKind::kNone;
  p.scales.resize(static_cast<size_t>(meta.total_entries));
  const size_t plane = static_cast<size_t>(meta.total_entries);
  if (meta.has_zero) p.zero_fold.resize(2 * plane);
  for (int64_t i = 0; i < meta.total_entries; ++i) {
    const repack::MetaEntry entry = repack::pack_meta_entry(src, meta, i, errors);
    p.scales[static_cast<size_t>(i)] = entry.scale;
    if (meta.has_zero) {
      p.zero_fold[static_cast<size_t>(i)] = entry.zero_shift;
      p.zero_fold[plane + static_cast<size_t>(i)] = entry.zero_fold;
    }
  }
  return p;
}

// Everything the device stores (zero_points are host-only).
void expect_same_device_bytes(const PackedWeight& want, const PackedWeight& got,
                              const std::string& where) {
  EXPECT_EQ(got.zero_kind, want.zero_kind) << where;
  EXPECT_EQ(got.perm, want.perm) << where;
  ASSERT_EQ(got.codes.size(), want.codes.size()) << where;
  for (size_t i = 0; i < want.codes.size(); ++i) {
    ASSERT_EQ(got.codes[i], want.codes[i]) << where << ": code byte " << i;
  }
  EXPECT_EQ(got.scales, want.scales) << where;
  EXPECT_EQ(got.zero_fold, want.zero_fold) << where;
}

PackedWeight cpu_pack(const QuantizedWeight& w, DType dtype) {
  PackedWeight p;
  const Status st = pack(w, dtype, &p);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return p;
}

std::vector<int32_t> perm_of(const QuantizedWeight& w, const PackedGeometry& geo) {
  std::vector<int32_t> perm;
  if (!w.g_idx.empty()) {
    EXPECT_TRUE(act_order_permutation(w.g_idx, w.k, geo.group_rows, w.num_groups(), &perm).ok());
  }
  return perm;
}

std::vector<uint16_t> narrowed(const std::vector<float>& values, DType dtype) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = float_to_bits(values[i], dtype);
  return out;
}

std::string describe(int bits, int group_size, ZeroPointKind kind, bool act_order, DType dtype) {
  return std::string("bits ") + std::to_string(bits) + " group " + std::to_string(group_size) +
         " zero " + zero_point_kind_name(kind) + (act_order ? " act-order " : " ") +
         dtype_name(dtype);
}

using EmulationParam = std::tuple<int, int, ZeroPointKind, bool, DType>;
class RepackEmulationCanonical : public ::testing::TestWithParam<EmulationParam> {};
class RepackEmulationGptq : public ::testing::TestWithParam<EmulationParam> {};
class RepackEmulationAwq : public ::testing::TestWithParam<EmulationParam> {};
class RepackEmulationMatMulNBits : public ::testing::TestWithParam<EmulationParam> {};

TEST_P(RepackEmulationCanonical, MatchesPack) {
  const auto [bits, group_size, kind, act_order, dtype] = GetParam();
  std::mt19937_64 rng(test_seed() + 72);
  const int64_t shapes[][2] = {{72, 200}, {1, 300}, {130, 64}};
  for (const auto& shape : shapes) {
    RandomWeightSpec spec{shape[0], shape[1], bits, group_size, kind, act_order, dtype};
    const QuantizedWeight w = random_weight(rng, spec);
    const PackedWeight want = cpu_pack(w, dtype);
    // Scales in the packed dtype (exact: random_weight drew them so), zero values as float32.
    const std::vector<uint16_t> scales = narrowed(w.scales, dtype);
    repack::CanonicalSource src{};
    src.n = w.n;
    src.k = w.k;
    src.bits = w.bits;
    src.codes = w.codes.data();
    src.scales = repack::ScalarArray{scales.data(), dtype};
    src.zero_kind = w.zero_kind;
    src.zero_codes = w.zero_codes.data();
    src.zero_values = repack::ScalarArray{w.zero_values.data(), DType::kF32};
    uint32_t errors = 0;
    const PackedWeight got = emulate_repack(src, want.geometry, w.num_groups(), w.zero_kind,
                                            perm_of(w, want.geometry), dtype, &errors);
    EXPECT_EQ(errors, 0u);
    expect_same_device_bytes(want, got, describe(bits, group_size, kind, act_order, dtype));
  }
}

TEST_P(RepackEmulationGptq, MatchesImportThenPack) {
  const auto [bits, group_size, kind, act_order, dtype] = GetParam();
  std::mt19937_64 rng(test_seed() + 73);
  const int64_t shapes[][2] = {{72, 200}, {8, 64}, {136, 320}};
  int round = 0;
  for (const auto& shape : shapes) {
    RandomWeightSpec spec{shape[0], shape[1], bits, group_size, kind, act_order, dtype};
    const QuantizedWeight w = random_weight(rng, spec);
    const auto convention =
        round++ % 2 ? GptqZeroConvention::kV2Exact : GptqZeroConvention::kV1MinusOne;
    GptqTensors t;
    ASSERT_TRUE(export_gptq(w, convention, &t).ok());
    QuantizedWeight imported;
    ASSERT_TRUE(import_gptq(t, &imported).ok());
    const PackedWeight want = cpu_pack(imported, dtype);
    repack::GptqSource src{};
    src.n = t.n;
    src.bits = t.bits;
    src.v1_minus_one = convention == GptqZeroConvention::kV1MinusOne;
    src.qweight = t.qweight.data();
    src.qzeros = t.qzeros.data();
    src.scales = repack::ScalarArray{t.scales.data(), DType::kF32};
    // The symmetric test the scan kernel makes.
    bool differs = false;
    for (int64_t g = 0; g < imported.num_groups(); ++g) {
      for (int64_t nn = 0; nn < t.n; ++nn) {
        differs = differs || src.zero_code(g, nn) != repack::code_bias_of(bits);
      }
    }
    const ZeroPointKind zero_kind = differs ? ZeroPointKind::kInteger : ZeroPointKind::kNone;
    uint32_t errors = 0;
    const PackedWeight got = emulate_repack(src, want.geometry, imported.num_groups(), zero_kind,
                                            perm_of(imported, want.geometry), dtype, &errors);
    EXPECT_EQ(errors, 0u);
    expect_same_device_bytes(want, got, describe(bits, group_size, kind, act_order, dtype));
  }
}

TEST_P(RepackEmulationAwq, MatchesImportThenPack) {
  const auto [bits, group_size, kind, act_order, dtype] = GetParam();
  std::mt19937_64 rng(test_seed() + 74);
  const int64_t shapes[][2] = {{72, 200}, {8, 1}, {136, 320}};
  for (const auto& shape : shapes) {
    RandomWeightSpec spec{shape[0], shape[1], bits, group_size, kind, false, dtype};
    const QuantizedWeight w = random_weight(rng, spec);
    AwqTensors t;
    ASSERT_TRUE(export_awq(w, &t).ok());
    QuantizedWeight imported;
    ASSERT_TRUE(import_awq(t, &imported).ok());
    const PackedWeight want = cpu_pack(imported, dtype);
    repack::AwqSource src{};
    src.n = t.n;
    src.qweight = t.qweight.data();
    src.qzeros = t.qzeros.data();
    src.scales = repack::ScalarArray{t.scales.data(), DType::kF32};
    uint32_t errors = 0;
    const PackedWeight got = emulate_repack(src, want.geometry, imported.num_groups(),
                                            ZeroPointKind::kInteger, {}, dtype, &errors);
    EXPECT_EQ(errors, 0u);
    expect_same_device_bytes(want, got, describe(bits, group_size, kind, act_order, dtype));
  }
}

TEST_P(RepackEmulationMatMulNBits, MatchesImportThenPack) {
  const auto [bits, group_size, kind, act_order, dtype] = GetParam();
  std::mt19937_64 rng(test_seed() + 75);
  const int64_t shapes[][2] = {{72, 200}, {1, 300}, {130, 64}};
  for (const auto& shape : shapes) {
    RandomWeightSpec spec{shape[0], shape[1], bits, group_size, kind, act_order, dtype};
    const QuantizedWeight w = random_weight(rng, spec);
    MatMulNBitsTensors t;
    ASSERT_TRUE(export_matmul_nbits(w, &t).ok());
    QuantizedWeight imported;
    ASSERT_TRUE(import_matmul_nbits(t, &imported).ok());
    const PackedWeight want = cpu_pack(imported, dtype);
    // Scales in the packed dtype, typed zero points in fp32: both source types are exercised.
    const std::vector<uint16_t> scales = narrowed(t.scales, dtype);
    repack::MatMulNBitsSource src{};
    src.bits = t.bits;
    src.k_blocks = t.k_blocks();
    src.row_bytes = t.k_blocks() * t.blob_bytes();
    src.b = t.b.data();
    src.scales = repack::ScalarArray{scales.data(), dtype};
    src.zero_kind = t.zero_kind;
    src.zero_packed = t.zero_points_packed.data();
    src.zero_row_bytes = t.packed_zero_bytes_per_row();
    src.zero_typed = repack::ScalarArray{t.zero_points_typed.data(), DType::kF32};
    uint32_t errors = 0;
    const PackedWeight got = emulate_repack(src, want.geometry, imported.num_groups(), t.zero_kind,
                                            perm_of(imported, want.geometry), dtype, &errors);
    EXPECT_EQ(errors, 0u);
    expect_same_device_bytes(want, got, describe(bits, group_size, kind, act_order, dtype));
  }
}

const auto kAllBits = ::testing::Values(4, 8);
const auto kAllGroups = ::testing::Values(16, 32, 64, 128, 256, -1);
const auto kAllZeroKinds =
    ::testing::Values(ZeroPointKind::kNone, ZeroPointKind::kInteger, ZeroPointKind::kFloat);
const auto kIntegerZeroKinds = ::testing::Values(ZeroPointKind::kNone, ZeroPointKind::kInteger);
const auto kHalfTypes = ::testing::Values(DType::kF16, DType::kBF16);

INSTANTIATE_TEST_SUITE_P(All, RepackEmulationCanonical,
                         ::testing::Combine(kAllBits, kAllGroups, kAllZeroKinds,
                                            ::testing::Bool(), kHalfTypes));
// GPTQ stores integer zero points only.
INSTANTIATE_TEST_SUITE_P(All, RepackEmulationGptq,
                         ::testing::Combine(kAllBits, kAllGroups, kIntegerZeroKinds,
                                            ::testing::Bool(), kHalfTypes));
// AWQ: 4-bit, integer zero points, no act-order.
INSTANTIATE_TEST_SUITE_P(All, RepackEmulationAwq,
                         ::testing::Combine(::testing::Values(4), kAllGroups, kIntegerZeroKinds,
                                            ::testing::Values(false), kHalfTypes));
// MatMulNBits: block sizes only, no channelwise form.
INSTANTIATE_TEST_SUITE_P(All, RepackEmulationMatMulNBits,
                         ::testing::Combine(kAllBits, ::testing::Values(16, 32, 64, 128, 256),
                                            kAllZeroKinds, ::testing::Bool(), kHalfTypes));

// The device-side data checks, seen from the per-item functions.
TEST(RepackEmulationErrors, BadCanonicalValuesRaiseTheirFlags) {
  std::mt19937_64 rng(test_seed() + 76);
  RandomWeightSpec spec{64, 64, 4, 32, ZeroPointKind::kInteger, false, DType::kBF16};
  QuantizedWeight w = random_weight(rng, spec);
  PackedGeometry geo;
  ASSERT_TRUE(PackedGeometry::make(w.n, w.k, w.bits, w.group_size, &geo).ok());
  auto flags_of = [&](const QuantizedWeight& bad) {
    repack::CanonicalSource src{};
    src.n = bad.n;
    src.k = bad.k;
    src.bits = bad.bits;
    src.codes = bad.codes.data();
    src.scales = repack::ScalarArray{bad.scales.data(), DType::kF32};
    src.zero_kind = bad.zero_kind;
    src.zero_codes = bad.zero_codes.data();
    src.zero_values = repack::ScalarArray{bad.zero_values.data(), DType::kF32};
    uint32_t errors = 0;
    emulate_repack(src, geo, bad.num_groups(), bad.zero_kind, {}, DType::kBF16, &errors);
    return errors;
  };
  EXPECT_EQ(flags_of(w), 0u);
  QuantizedWeight bad = w;
  bad.codes[100] = 16;
  EXPECT_EQ(flags_of(bad), uint32_t(repack::kErrorCodeOutOfRange));
  bad = w;
  bad.zero_codes[3] = 200;
  EXPECT_EQ(flags_of(bad), uint32_t(repack::kErrorZeroOutOfRange));
  bad = w;
  bad.scales[5] = bits_float(0x7fc00000u);  // NaN
  EXPECT_EQ(flags_of(bad), uint32_t(repack::kErrorScaleNotFinite));
  bad = w;
  bad.zero_kind = ZeroPointKind::kFloat;
  bad.zero_values.assign(bad.zero_codes.size(), 3.5f);
  bad.zero_codes.clear();
  bad.zero_values[7] = bits_float(0xff800000u);  // -inf
  EXPECT_EQ(flags_of(bad), uint32_t(repack::kErrorZeroNotFinite));
}

}  // namespace
}  // namespace sailfish
