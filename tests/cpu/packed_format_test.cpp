// The packed format: bit-exact round trips, and the fragment invariants the kernels rely on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>

#include "sailfish/packed_format.h"
#include "sailfish/quantize.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::RandomWeightSpec;
using testing::random_weight;
using testing::test_seed;

uint32_t load_word(const std::vector<uint8_t>& bytes, int64_t word) {
  uint32_t v;
  std::memcpy(&v, bytes.data() + word * 4, 4);
  return v;
}

// bits x group size x zero kind x act-order x scale dtype, over odd shapes.
class PackRoundTrip
    : public ::testing::TestWithParam<std::tuple<int, int, ZeroPointKind, bool, DType>> {};

TEST_P(PackRoundTrip, UnpackOfPackIsIdentity) {
  const auto [bits, group_size, zero_kind, act_order, dtype] = GetParam();
  std::mt19937_64 rng(test_seed() + 11);
  const int64_t shapes[][2] = {{64, 64}, {72, 40}, {1, 300}, {130, 256}, {8, 520}, {200, 1000}};
  for (const auto& shape : shapes) {
    RandomWeightSpec spec;
    spec.n = shape[0];
    spec.k = shape[1];
    spec.bits = bits;
    spec.group_size = group_size;
    spec.zero_kind = zero_kind;
    spec.act_order = act_order;
    spec.scale_dtype = dtype;
    const QuantizedWeight w = random_weight(rng, spec);
    PackedWeight p;
    ASSERT_TRUE(pack(w, dtype, &p).ok());
    ASSERT_TRUE(validate(p).ok());
    EXPECT_EQ(p.codes.size(), static_cast<size_t>(p.geometry.code_bytes()));
    EXPECT_EQ(p.has_act_order(), act_order && group_size != kChannelwise);
    QuantizedWeight back;
    const Status st = unpack(p, &back);
    ASSERT_TRUE(st.ok()) << st.to_string();
    EXPECT_TRUE(back == w) << "n=" << spec.n << " k=" << spec.k;
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllFormats, PackRoundTrip,
    ::testing::Combine(::testing::Values(4, 8), ::testing::Values(16, 32, 64, 128, 256, -1),
                       ::testing::Values(ZeroPointKind::kNone, ZeroPointKind::kInteger,
                                         ZeroPointKind::kFloat),
                       ::testing::Bool(), ::testing::Values(DType::kF16, DType::kBF16)));

TEST(PackedFormat, EveryPositionOfABlockIsUsedOnce) {
  for (int bits : {4, 8}) {
    PackedGeometry geo;
    ASSERT_TRUE(PackedGeometry::make(128, 128, bits, 128, &geo).ok());
    std::vector<int> hits(static_cast<size_t>(geo.code_bytes() * 8 / bits), 0);
    for (int64_t nn = 0; nn < geo.n_pad; ++nn) {
      for (int64_t kk = 0; kk < geo.k_pad; ++kk) {
        const int64_t slot = geo.word_index(nn, kk) * (32 / bits) + geo.lane_position(nn, kk);
        ++hits[static_cast<size_t>(slot)];
        // Each block is one contiguous byte run.
        const int64_t block = (nn / 64) * geo.k_blocks + kk / 64;
        EXPECT_EQ(geo.word_index(nn, kk) * 4 / geo.block_bytes(), block);
      }
    }
    for (int h : hits) ASSERT_EQ(h, 1) << "bits " << bits;
  }
}

// The invariant both tiers rely on: lane T of n16 group j finds, in the word of k16 slice s, the
// mma.m16n8k16 B fragment (= the swapped wgmma A fragment) of columns c = 16j + T/4 and c + 8,
// rows 2(T%4) + {0, 1, 8, 9}, and `word >> shift & mask` yields the register pairs in order.
TEST(PackedFormat, WordsAreTensorCoreFragments) {
  std::mt19937_64 rng(test_seed() + 12);
  for (int bits : {4, 8}) {
    RandomWeightSpec spec;
    spec.n = 64;
    spec.k = 64;
    spec.bits = bits;
    const QuantizedWeight w = random_weight(rng, spec);
    PackedWeight p;
    ASSERT_TRUE(pack(w, DType::kBF16, &p).ok());
    auto code = [&](int64_t nn, int64_t kk) { return w.codes[static_cast<size_t>(nn * 64 + kk)]; };
    for (int j = 0; j < 4; ++j) {
      for (int lane = 0; lane < 32; ++lane) {
        const int c = 16 * j + lane / 4, k0 = 2 * (lane % 4);
        // The lane's run: 16 bytes (int4) or 32 bytes (int8), contiguous.
        const int64_t run = (j * 32 + lane) * bits;
        for (int s = 0; s < 4; ++s) {
          const int kb = 16 * s + k0;
          if (bits == 4) {
            const uint32_t q = load_word(p.codes, run + s);
            // Register pairs, low half first: q & 0x000f000f -> {(kb, c), (kb+1, c)}.
            const int expected[4][2][2] = {{{kb, c}, {kb + 1, c}},
                                           {{kb + 8, c}, {kb + 9, c}},
                                           {{kb, c + 8}, {kb + 1, c + 8}},
                                           {{kb + 8, c + 8}, {kb + 9, c + 8}}};
            for (int reg = 0; reg < 4; ++reg) {
              const uint32_t pair = (q >> (4 * reg)) & 0x000f000fu;
              EXPECT_EQ(pair & 0xf, code(expected[reg][0][1], expected[reg][0][0]));
              EXPECT_EQ(pair >> 16, code(expected[reg][1][1], expected[reg][1][0]));
            }
          } else {
            for (int half = 0; half < 2; ++half) {
              const uint32_t q = load_word(p.codes, run + 2 * s + half);
              const int col = c + 8 * half;
              // Bytes k0 k8 k1 k9: bytes {0, 2} form the pair {kb, kb+1}, bytes {1, 3} {kb+8, kb+9}.
              EXPECT_EQ((q >> 0) & 0xff, code(col, kb));
              EXPECT_EQ((q >> 16) & 0xff, code(col, kb + 1));
              EXPECT_EQ((q >> 8) & 0xff, code(col, kb + 8));
              EXPECT_EQ((q >> 24) & 0xff, code(col, kb + 9));
            }
          }
        }
      }
    }
  }
}

// The magic-number dequantization the kernels use, emulated bit for bit on the host, for every
// code value: OR the code into the mantissa of a power of two, subtract (power + code bias).
TEST(PackedFormat, MagicNumberDequantizationOfEveryCode) {
  for (int q = 0; q < 16; ++q) {
    // bf16: 0x4300 is 128.0 with 7 mantissa bits, so 0x4300 | q is 128 + q exactly.
    EXPECT_EQ(bits_to_float(static_cast<uint16_t>(0x4300 | q), DType::kBF16) - 136.0f, q - 8);
    // fp16: 0x6400 is 1024.0 with 10 mantissa bits.
    EXPECT_EQ(bits_to_float(static_cast<uint16_t>(0x6400 | q), DType::kF16) - 1032.0f, q - 8);
  }
  for (int q = 0; q < 256; ++q) {
    EXPECT_EQ(bits_to_float(static_cast<uint16_t>(0x6400 | q), DType::kF16) - 1152.0f, q - 128);
    // bf16 has too few mantissa bits for a byte. The zero-point path goes through fp32
    // (2^23 = 0x4b000000).
    uint32_t u = 0x4b000000u | static_cast<uint32_t>(q);
    float f;
    std::memcpy(&f, &u, 4);
    EXPECT_EQ(f - 8388736.0f, q - 128);
    EXPECT_EQ(round_to_dtype(f - 8388736.0f, DType::kBF16), q - 128);  // exact in bf16 too
    // The other bf16 paths split the byte into its seven low bits and its top bit, neither
    // shifted (dequant.cuh): 0x4300 | lo7 = 128 + lo7, and the top bit on the exponent's lowest
    // bit (bit 7 of a half).
    const auto bf16 = [](uint32_t bits) {
      return bits_to_float(static_cast<uint16_t>(bits), DType::kBF16);
    };
    const uint32_t b = static_cast<uint32_t>(q);
    const float low = bf16((b & 0x7fu) | 0x4300u);
    EXPECT_EQ(low, 128.0f + (q & 0x7f));
    // Per pair (int8_word_to_pairs): (~b & 0x80) | 0xc300 = -256 + 128 top, and one bf16 add of
    // the two gives q - 128 unrounded.
    const float negative_top = bf16((~b & 0x80u) | 0xc300u);
    EXPECT_EQ(negative_top, -256.0f + 128.0f * (q >> 7));
    EXPECT_EQ(round_to_dtype(low + negative_top, DType::kBF16), q - 128);
    // Offset form (int8_word_to_split_pairs): (b & 0x80) | 0x4300 = 128 + 128 top; the two meet
    // the same activations, so the weight is their sum, (q - 128) + 384 (OffsetForm's unit).
    const float top = bf16((b & 0x80u) | 0x4300u);
    EXPECT_EQ(top, 128.0f + 128.0f * (q >> 7));
    EXPECT_EQ(low + top - 384.0f, q - 128);
  }
}

// W = (q - shift) * s + fold: shift is the integer nearest zp in the code range (stored as a u16
// integer); fold = round((shift - zp) * s) is +0.0 for integer zero points and otherwise off
// by at most one unit roundoff of |(shift - zp) * s| <= |s| / 2 (through float, then the 16-bit
// type; in fp16 plus the subnormal spacing 2^-24). Zero points outside the code range clamp.
TEST(PackedFormat, ZeroShiftAndFoldMatchDequantization) {
  std::mt19937_64 rng(test_seed() + 13);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    for (int bits : {4, 8}) {
      for (ZeroPointKind kind : {ZeroPointKind::kInteger, ZeroPointKind::kFloat}) {
        RandomWeightSpec spec;
        spec.n = 64;
        spec.k = 256;
        spec.bits = bits;
        spec.zero_kind = kind;
        spec.scale_dtype = dtype;
        QuantizedWeight w = random_weight(rng, spec);
        const int max_code = (1 << bits) - 1;
        if (kind == ZeroPointKind::kFloat) {  // two out of range: they clamp
          w.zero_values[0] = round_to_dtype(-3.3f, dtype);
          w.zero_values[1] = round_to_dtype(max_code + 7.6f, dtype);
        }
        PackedWeight p;
        ASSERT_TRUE(pack(w, dtype, &p).ok());
        const size_t plane = static_cast<size_t>(p.geometry.scale_rows * p.geometry.n_pad);
        ASSERT_EQ(p.zero_fold.size(), 2 * plane);
        const double unit_roundoff =
            dtype == DType::kBF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
        const double subnormal_spacing = dtype == DType::kF16 ? std::ldexp(1.0, -24) : 0.0;
        for (int64_t g = 0; g < w.num_groups(); ++g) {
          for (int64_t nn = 0; nn < w.n; ++nn) {
            const size_t i = static_cast<size_t>(g * p.geometry.n_pad + nn);
            const double s = bits_to_float(p.scales[i], dtype);
            const double zp = w.zero_point(g, nn);
            const double shift = p.zero_fold[i];  // an integer, not dtype bits
            const double fold = bits_to_float(p.zero_fold[plane + i], dtype);
            const double nearest = std::min<double>(std::max(std::floor(zp + 0.5), 0.0), max_code);
            EXPECT_EQ(shift, nearest) << "zero point " << zp;
            const double exact = (shift - zp) * s;
            if (kind == ZeroPointKind::kInteger) {
              EXPECT_EQ(fold, 0.0) << "zero point " << zp;
            } else {
              EXPECT_LE(std::abs(fold - exact),
                        2 * unit_roundoff * std::abs(exact) + subnormal_spacing)
                  << "scale " << s << " zero point " << zp;
            }
            if (zp >= 0 && zp <= max_code) {
              EXPECT_LE(std::abs(exact), std::abs(s) / 2) << "zero point " << zp;
            }
          }
        }
      }
    }
  }
}

// The kernels' dequantization of a zero-point weight, modelled on the host: each weight is
// (q - shift) * s + fold with one rounding to bf16 (hfma2), products summed in float, the output
// rounded to bf16. Against the float64 reference its error must stay within twice that of a plain
// bf16 implementation (weights rounded from (q - zp) * s, the GPU tests' bound, gemm_check.cu).
// The case is the GPU test that broke that bound with format version 1, whose one fold
// (B - zp) * s rounded coherently over each group: u8, float zero points, group 256, act-order,
// M = 1 (error 1.04x the bound at that seed, 0.33x with shift and fold), plus fresh seeds.
TEST(PackedFormat, ZeroSplitKeepsBf16DequantizationWithinTwicePlain) {
  const uint64_t seeds[] = {13932837055284209511ull + 201, test_seed() + 15, test_seed() + 16};
  for (uint64_t seed : seeds) {
    std::mt19937_64 rng(seed);
    RandomWeightSpec spec;
    spec.n = 200;
    spec.k = 1000;
    spec.bits = 8;
    spec.group_size = 256;
    spec.zero_kind = ZeroPointKind::kFloat;
    spec.act_order = true;
    const QuantizedWeight w = random_weight(rng, spec);
    std::mt19937_64 data_rng(rng());  // as run_and_check draws activations and bias
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    std::vector<double> a(static_cast<size_t>(w.k)), bias(static_cast<size_t>(w.n));
    for (auto& v : a) v = round_to_dtype(unit(data_rng), DType::kBF16);
    for (auto& v : bias) v = round_to_dtype(unit(data_rng), DType::kBF16);
    PackedWeight p;
    ASSERT_TRUE(pack(w, DType::kBF16, &p).ok());
    const PackedGeometry& geo = p.geometry;
    const size_t plane = static_cast<size_t>(geo.scale_rows * geo.n_pad);
    auto bf16 = [](double x) {
      return static_cast<double>(round_to_dtype(static_cast<float>(x), DType::kBF16));
    };
    double error = 0, plain_error = 0, ref_max = 0;
    for (int64_t nn = 0; nn < w.n; ++nn) {
      double ref = bias[static_cast<size_t>(nn)];
      float sum = 0, plain_sum = 0;
      for (int64_t r = 0; r < w.k; ++r) {  // packed row r holds input column perm[r]
        const int64_t col = p.perm[static_cast<size_t>(r)];
        const size_t meta = static_cast<size_t>((r / geo.group_rows) * geo.n_pad + nn);
        const double q = w.codes[static_cast<size_t>(nn * w.k + col)];
        const double s = bits_to_float(p.scales[meta], DType::kBF16);
        const double shift = p.zero_fold[meta];
        const double fold = bits_to_float(p.zero_fold[plane + meta], DType::kBF16);
        const double x = a[static_cast<size_t>(col)];
        sum += static_cast<float>(x * bf16((q - shift) * s + fold));  // exact product in float
        plain_sum += static_cast<float>(x * bf16(w.dequantized(nn, col)));
        ref += x * w.dequantized(nn, col);
      }
      const double b = bias[static_cast<size_t>(nn)];
      error = std::max(error, std::abs(bf16(sum + b) - ref));
      plain_error = std::max(plain_error, std::abs(bf16(plain_sum + b) - ref));
      ref_max = std::max(ref_max, std::abs(ref));
    }
    const double atol = 1e-6 + 0.25 / 128 * ref_max;  // gemm_check.cu's quarter ulp
    EXPECT_LE(error, 2 * plain_error + atol) << "seed " << seed << ": plain " << plain_error;
  }
}

TEST(PackedFormat, PaddingHasZeroScaleAndCodeBias) {
  std::mt19937_64 rng(test_seed() + 14);
  RandomWeightSpec spec;
  spec.n = 70;
  spec.k = 100;
  spec.group_size = 32;
  const QuantizedWeight w = random_weight(rng, spec);
  PackedWeight p;
  ASSERT_TRUE(pack(w, DType::kBF16, &p).ok());
  const PackedGeometry& geo = p.geometry;
  EXPECT_EQ(geo.n_pad, 128);
  EXPECT_EQ(geo.k_pad, 128);
  EXPECT_EQ(geo.scale_rows, 4);  // ceil(128 / 32), though only ceil(100 / 32) = 4 groups are real
  for (int64_t nn = 0; nn < geo.n_pad; ++nn) {
    for (int64_t kk = 0; kk < geo.k_pad; ++kk) {
      if (nn < w.n && kk < w.k) continue;
      const uint32_t word = load_word(p.codes, geo.word_index(nn, kk));
      EXPECT_EQ((word >> (geo.lane_position(nn, kk) * 4)) & 0xf, 8u);
    }
  }
  for (int64_t g = 0; g < geo.scale_rows; ++g) {
    for (int64_t nn = w.n; nn < geo.n_pad; ++nn) {
      EXPECT_EQ(bits_to_float(p.scales[static_cast<size_t>(g * geo.n_pad + nn)], DType::kBF16), 0.f);
    }
  }
}

TEST(PackedFormat, ActOrderSortsRowsIntoGroups) {
  std::mt19937_64 rng(test_seed() + 15);
  RandomWeightSpec spec;
  spec.n = 64;
  spec.k = 300;  // last group short: 300 = 2 * 128 + 44
  spec.act_order = true;
  const QuantizedWeight w = random_weight(rng, spec);
  PackedWeight p;
  ASSERT_TRUE(pack(w, DType::kBF16, &p).ok());
  ASSERT_EQ(p.perm.size(), 300u);
  for (int64_t r = 0; r < w.k; ++r) {
    EXPECT_EQ(w.g_idx[static_cast<size_t>(p.perm[static_cast<size_t>(r)])], r / 128);
    if (r > 0 && r / 128 == (r - 1) / 128) {  // stable: input order kept inside a group
      EXPECT_LT(p.perm[static_cast<size_t>(r - 1)], p.perm[static_cast<size_t>(r)]);
    }
  }
}

// validate(PackedWeight) stands between a packed weight (built by hand, deserialized or loaded)
// and the device: each inconsistency must be refused with a message that names it.
TEST(PackedFormat, ValidateRefusesEveryInconsistency) {
  std::mt19937_64 rng(test_seed() + 16);
  RandomWeightSpec spec;
  spec.n = 96;
  spec.k = 160;
  spec.group_size = 32;
  spec.zero_kind = ZeroPointKind::kInteger;
  spec.act_order = true;
  PackedWeight good;
  ASSERT_TRUE(pack(random_weight(rng, spec), DType::kBF16, &good).ok());
  ASSERT_TRUE(validate(good).ok());
  ASSERT_EQ(good.perm.size(), 160u);

  struct Case {
    const char* what;
    std::function<void(PackedWeight&)> apply;
    const char* message;
  };
  const Case cases[] = {
      {"version", [](PackedWeight& p) { p.version += 1; }, "format version"},
      {"bits", [](PackedWeight& p) { p.geometry.bits = 3; }, "bits is 3"},
      {"n_pad", [](PackedWeight& p) { p.geometry.n_pad += 64; }, "geometry is inconsistent"},
      {"k_pad", [](PackedWeight& p) { p.geometry.k_pad += 64; }, "geometry is inconsistent"},
      {"n_blocks", [](PackedWeight& p) { p.geometry.n_blocks += 1; }, "geometry is inconsistent"},
      {"k_blocks", [](PackedWeight& p) { p.geometry.k_blocks += 1; }, "geometry is inconsistent"},
      {"group_rows", [](PackedWeight& p) { p.geometry.group_rows = 64; },
       "geometry is inconsistent"},
      {"scale_rows", [](PackedWeight& p) { p.geometry.scale_rows += 1; },
       "geometry is inconsistent"},
      {"scale dtype fp32", [](PackedWeight& p) { p.scale_dtype = DType::kF32; }, "scale dtype"},
      {"codes short", [](PackedWeight& p) { p.codes.pop_back(); }, "codes hold"},
      {"scales short", [](PackedWeight& p) { p.scales.pop_back(); }, "scales hold"},
      {"zero kind out of enum", [](PackedWeight& p) { p.zero_kind = static_cast<ZeroPointKind>(7); },
       "zero kind 7"},
      {"zero planes beside none", [](PackedWeight& p) { p.zero_kind = ZeroPointKind::kNone; },
       "zero points hold"},
      {"zero fold short", [](PackedWeight& p) { p.zero_fold.pop_back(); }, "zero points hold"},
      {"zero points short", [](PackedWeight& p) { p.zero_points.pop_back(); }, "zero points hold"},
      {"perm short", [](PackedWeight& p) { p.perm.pop_back(); }, "perm has 159 entries"},
      {"perm negative", [](PackedWeight& p) { p.perm[7] = -1; }, "not a permutation"},
      {"perm past k", [](PackedWeight& p) { p.perm[7] = 160; }, "not a permutation"},
      {"perm repeats", [](PackedWeight& p) { p.perm[7] = p.perm[8]; }, "not a permutation"},
  };
  for (const Case& c : cases) {
    PackedWeight p = good;
    c.apply(p);
    const Status st = validate(p);
    EXPECT_FALSE(st.ok()) << c.what << ": accepted";
    EXPECT_NE(st.message().find(c.message), std::string::npos)
        << c.what << ": \"" << st.message() << "\" lacks \"" << c.message << "\"";
  }
}

TEST(PackedFormat, GeometryOfRealLayers) {
  PackedGeometry geo;
  ASSERT_TRUE(PackedGeometry::make(57344, 8192, 4, 128, &geo).ok());
  EXPECT_EQ(geo.code_bytes(), 57344LL * 8192 / 2);
  EXPECT_EQ(geo.block_bytes(), 2048);
  ASSERT_TRUE(PackedGeometry::make(10944, 7392, 8, -1, &geo).ok());
  EXPECT_EQ(geo.n_pad, 10944);  // 171 blocks: a multiple of 64 already
  EXPECT_EQ(geo.k_pad, 7424);
  EXPECT_EQ(geo.block_bytes(), 4096);
  EXPECT_EQ(geo.group_rows, 7424);
  EXPECT_EQ(geo.scale_rows, 1);
}

}  // namespace
}  // namespace sailfish
