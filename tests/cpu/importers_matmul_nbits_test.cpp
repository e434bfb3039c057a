// ONNX Runtime MatMulNBits import / export: round trips in both directions over the whole format
// grid, a hand-built example that pins the nibble orders, and malformed tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "sailfish/importers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

constexpr int kBlockSizes[] = {16, 32, 64, 128, 256};
constexpr ZeroPointKind kZeroKinds[] = {ZeroPointKind::kNone, ZeroPointKind::kInteger,
                                        ZeroPointKind::kFloat};

// K values per block size: whole blocks, a partial last block, and a single partial block.
std::vector<int64_t> k_values(int block_size) {
  return {int64_t(block_size) * 3, int64_t(block_size) * 2 + 5, int64_t(block_size) / 2 + 1};
}

std::string describe(int bits, int block_size, ZeroPointKind zk, bool act_order, int64_t k) {
  return "bits=" + std::to_string(bits) + " block_size=" + std::to_string(block_size) +
         " zero=" + zero_point_kind_name(zk) + " act_order=" + std::to_string(act_order) +
         " k=" + std::to_string(k);
}

// Raw operator tensors written by hand from random codes, with the padding an exporter writes
// (the last block's zero point code, or the code bias) and a spare zero point nibble of 8. Built
// with plain shifts, independently of the library's packing.
MatMulNBitsTensors raw_tensors(std::mt19937_64& rng, int bits, int block_size, ZeroPointKind zk,
                               bool act_order, int64_t k, int64_t n) {
  MatMulNBitsTensors t;
  t.k = k;
  t.n = n;
  t.bits = bits;
  t.block_size = block_size;
  t.zero_kind = zk;
  const int64_t kb = t.k_blocks();
  const int max_code = (1 << bits) - 1;
  std::uniform_int_distribution<int> code(0, max_code);
  std::vector<int> zero_codes(static_cast<size_t>(n * kb));
  for (auto& z : zero_codes) z = code(rng);
  const int64_t padded_k = kb * block_size;
  t.b.assign(static_cast<size_t>(n * kb * t.blob_bytes()), 0);
  for (int64_t nn = 0; nn < n; ++nn) {
    const int pad = zk == ZeroPointKind::kInteger
                        ? zero_codes[static_cast<size_t>(nn * kb + kb - 1)]
                        : code_bias(bits);
    for (int64_t kk = 0; kk < padded_k; ++kk) {
      const int c = kk < k ? code(rng) : pad;
      const int64_t bit = (nn * padded_k + kk) * bits;  // rows are whole bytes
      t.b[static_cast<size_t>(bit / 8)] |= static_cast<uint8_t>(c << (bit % 8));
    }
  }
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  t.scales.resize(static_cast<size_t>(n * kb));
  for (auto& s : t.scales) s = scale(rng);
  if (zk == ZeroPointKind::kInteger) {
    const int64_t row = t.packed_zero_bytes_per_row();
    t.zero_points_packed.assign(static_cast<size_t>(n * row), 0);
    for (int64_t nn = 0; nn < n; ++nn) {
      for (int64_t g = 0; g < row * 8 / bits; ++g) {
        const int z = g < kb ? zero_codes[static_cast<size_t>(nn * kb + g)] : code_bias(bits);
        const int64_t bit = g * bits;
        t.zero_points_packed[static_cast<size_t>(nn * row + bit / 8)] |=
            static_cast<uint8_t>(z << (bit % 8));
      }
    }
  } else if (zk == ZeroPointKind::kFloat) {
    std::uniform_real_distribution<float> zv(0.0f, float(max_code));
    t.zero_points_typed.resize(static_cast<size_t>(n * kb));
    for (auto& z : t.zero_points_typed) z = zv(rng);
  }
  if (act_order) {
    t.g_idx.resize(static_cast<size_t>(k));
    for (int64_t kk = 0; kk < k; ++kk) t.g_idx[static_cast<size_t>(kk)] = int32_t(kk / block_size);
    std::shuffle(t.g_idx.begin(), t.g_idx.end(), rng);
  }
  return t;
}

void expect_same_tensors(const MatMulNBitsTensors& a, const MatMulNBitsTensors& b) {
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.bits, b.bits);
  EXPECT_EQ(a.block_size, b.block_size);
  EXPECT_EQ(a.zero_kind, b.zero_kind);
  EXPECT_EQ(a.b, b.b);
  EXPECT_EQ(a.scales, b.scales);
  EXPECT_EQ(a.zero_points_packed, b.zero_points_packed);
  EXPECT_EQ(a.zero_points_typed, b.zero_points_typed);
  EXPECT_EQ(a.g_idx, b.g_idx);
}

TEST(MatMulNBitsRoundTrip, ExportThenImportGivesTheOriginalWeight) {
  std::mt19937_64 rng(testing::test_seed() + 3001);
  for (int bits : {4, 8}) {
    for (int block_size : kBlockSizes) {
      for (ZeroPointKind zk : kZeroKinds) {
        for (bool act_order : {false, true}) {
          for (int64_t k : k_values(block_size)) {
            SCOPED_TRACE(describe(bits, block_size, zk, act_order, k));
            testing::RandomWeightSpec spec;
            spec.n = 1 + int64_t(rng() % 40);
            spec.k = k;
            spec.bits = bits;
            spec.group_size = block_size;
            spec.zero_kind = zk;
            spec.act_order = act_order;
            spec.scale_dtype = (rng() & 1) ? DType::kF32 : DType::kF16;
            const QuantizedWeight w = testing::random_weight(rng, spec);
            MatMulNBitsTensors t;
            ASSERT_TRUE(export_matmul_nbits(w, &t).ok());
            EXPECT_EQ(t.block_size, block_size);
            EXPECT_EQ(t.b.size(), size_t(w.n * t.k_blocks() * block_size * bits / 8));
            EXPECT_EQ(t.scales.size(), size_t(w.n * t.k_blocks()));
            EXPECT_EQ(t.zero_points_packed.size(),
                      zk == ZeroPointKind::kInteger ? size_t(w.n * t.packed_zero_bytes_per_row())
                                                    : size_t(0));
            EXPECT_EQ(t.zero_points_typed.size(),
                      zk == ZeroPointKind::kFloat ? size_t(w.n * t.k_blocks()) : size_t(0));
            QuantizedWeight back;
            const Status st = import_matmul_nbits(t, &back);
            ASSERT_TRUE(st.ok()) << st.to_string();
            EXPECT_TRUE(back == w);
          }
        }
      }
    }
  }
}

TEST(MatMulNBitsRoundTrip, ImportThenExportReproducesTheRawBytes) {
  std::mt19937_64 rng(testing::test_seed() + 3002);
  for (int bits : {4, 8}) {
    for (int block_size : kBlockSizes) {
      for (ZeroPointKind zk : kZeroKinds) {
        for (bool act_order : {false, true}) {
          for (int64_t k : k_values(block_size)) {
            SCOPED_TRACE(describe(bits, block_size, zk, act_order, k));
            const MatMulNBitsTensors t =
                raw_tensors(rng, bits, block_size, zk, act_order, k, 1 + int64_t(rng() % 40));
            QuantizedWeight w;
            const Status st = import_matmul_nbits(t, &w);
            ASSERT_TRUE(st.ok()) << st.to_string();
            EXPECT_EQ(w.group_size, block_size);
            MatMulNBitsTensors back;
            ASSERT_TRUE(export_matmul_nbits(w, &back).ok());
            expect_same_tensors(back, t);
          }
        }
      }
    }
  }
}

TEST(MatMulNBitsImport, PaddingCodesAndSpareZeroNibbleAreIgnored) {
  std::mt19937_64 rng(testing::test_seed() + 3003);
  for (int bits : {4, 8}) {
    SCOPED_TRACE("bits=" + std::to_string(bits));
    // K = 37 with block 16: 3 blocks (odd, so a 4-bit zero point row has a spare nibble) and 11
    // padding codes per row.
    MatMulNBitsTensors t = raw_tensors(rng, bits, 16, ZeroPointKind::kInteger, false, 37, 5);
    MatMulNBitsTensors dirty = t;
    const int64_t row = t.k_blocks() * t.blob_bytes();
    for (int64_t nn = 0; nn < t.n; ++nn) {
      for (int64_t byte = (37 * bits + 7) / 8; byte < row; ++byte) {
        dirty.b[size_t(nn * row + byte)] ^= 0xA5;  // bytes wholly past K
      }
      if (bits == 4) {
        dirty.b[size_t(nn * row + 18)] ^= 0xF0;  // code 37: high nibble of byte 18
        dirty.zero_points_packed[size_t(nn * 2 + 1)] ^= 0xF0;  // spare nibble after block 2
      }
    }
    QuantizedWeight clean_w, dirty_w;
    ASSERT_TRUE(import_matmul_nbits(t, &clean_w).ok());
    ASSERT_TRUE(import_matmul_nbits(dirty, &dirty_w).ok());
    EXPECT_TRUE(clean_w == dirty_w);
    MatMulNBitsTensors back;
    ASSERT_TRUE(export_matmul_nbits(dirty_w, &back).ok());
    expect_same_tensors(back, t);  // the export writes canonical padding again
  }
}

TEST(MatMulNBitsImport, HandBuiltFourBitExamplePinsNibbleOrder) {
  // N = 2, K = 20, block 16: k_blocks = 2, blob = 8 bytes, codes 20..31 of each row are padding.
  MatMulNBitsTensors t;
  t.n = 2;
  t.k = 20;
  t.bits = 4;
  t.block_size = 16;
  t.zero_kind = ZeroPointKind::kInteger;
  t.b.assign(2 * 2 * 8, 0x77);
  t.b[0] = 0x21;       // row 0: code[0] = 1 (low nibble first), code[1] = 2
  t.b[9] = 0xC3;       // row 0, block 1, byte 1: code[18] = 3, code[19] = 12
  t.b[16 + 0] = 0x0F;  // row 1: code[0] = 15, code[1] = 0
  t.scales = {0.5f, 2.0f,     // row 0: blocks 0, 1
              -0.25f, 4.0f};  // row 1
  t.zero_points_packed = {0x5A,   // row 0: block 0 -> 10 (low nibble), block 1 -> 5
                          0x38};  // row 1: block 0 -> 8, block 1 -> 3
  QuantizedWeight w;
  const Status st = import_matmul_nbits(t, &w);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(w.group_size, 16);
  EXPECT_EQ(w.num_groups(), 2);
  EXPECT_EQ(w.codes[0], 1);
  EXPECT_EQ(w.codes[1], 2);
  EXPECT_EQ(w.codes[2], 7);
  EXPECT_EQ(w.codes[18], 3);
  EXPECT_EQ(w.codes[19], 12);
  EXPECT_EQ(w.codes[20 + 0], 15);
  EXPECT_EQ(w.codes[20 + 1], 0);
  // Canonical per-group data is [group][n]: the transpose of MatMulNBits' [n][block].
  EXPECT_EQ(w.scales, (std::vector<float>{0.5f, -0.25f, 2.0f, 4.0f}));
  EXPECT_EQ(w.zero_codes, (std::vector<uint8_t>{10, 8, 5, 3}));
  EXPECT_DOUBLE_EQ(w.dequantized(0, 0), (1 - 10) * 0.5);
  EXPECT_DOUBLE_EQ(w.dequantized(0, 19), (12 - 5) * 2.0);
  EXPECT_DOUBLE_EQ(w.dequantized(1, 0), (15 - 8) * -0.25);

  MatMulNBitsTensors back;
  ASSERT_TRUE(export_matmul_nbits(w, &back).ok());
  EXPECT_EQ(back.b[0], 0x21);
  EXPECT_EQ(back.b[9], 0xC3);
  // Row 0's padding (codes 20..31: bytes 10..15) holds block 1's zero point 5; row 1's holds 3.
  for (int byte = 10; byte < 16; ++byte) EXPECT_EQ(back.b[size_t(byte)], 0x55) << byte;
  for (int byte = 26; byte < 32; ++byte) EXPECT_EQ(back.b[size_t(byte)], 0x33) << byte;
  EXPECT_EQ(back.zero_points_packed, (std::vector<uint8_t>{0x5A, 0x38}));
  EXPECT_EQ(back.scales, t.scales);
}

TEST(MatMulNBitsImport, HandBuiltOddBlockCountAndEightBit) {
  // 4-bit, 3 blocks: the zero point row is 2 bytes, the high nibble of the second is spare.
  MatMulNBitsTensors t;
  t.n = 1;
  t.k = 48;
  t.bits = 4;
  t.block_size = 16;
  t.zero_kind = ZeroPointKind::kInteger;
  t.b.assign(24, 0x88);
  t.scales = {1.0f, 1.0f, 1.0f};
  t.zero_points_packed = {0x21, 0x83};  // blocks 0, 1, 2 -> 1, 2, 3; spare nibble 8
  QuantizedWeight w;
  ASSERT_TRUE(import_matmul_nbits(t, &w).ok());
  EXPECT_EQ(w.zero_codes, (std::vector<uint8_t>{1, 2, 3}));
  MatMulNBitsTensors back;
  ASSERT_TRUE(export_matmul_nbits(w, &back).ok());
  EXPECT_EQ(back.zero_points_packed, t.zero_points_packed);

  // 8-bit: one byte per code and per zero point; K = 17 pads the second block with its zero.
  MatMulNBitsTensors e;
  e.n = 1;
  e.k = 17;
  e.bits = 8;
  e.block_size = 16;
  e.zero_kind = ZeroPointKind::kInteger;
  e.b.assign(32, 0);
  for (int i = 0; i < 17; ++i) e.b[size_t(i)] = uint8_t(200 + i);
  e.scales = {0.5f, 0.25f};
  e.zero_points_packed = {128, 77};
  QuantizedWeight w8;
  ASSERT_TRUE(import_matmul_nbits(e, &w8).ok());
  EXPECT_EQ(w8.codes[16], 216);
  EXPECT_DOUBLE_EQ(w8.dequantized(0, 16), (216 - 77) * 0.25);
  ASSERT_TRUE(export_matmul_nbits(w8, &back).ok());
  for (int i = 17; i < 32; ++i) EXPECT_EQ(back.b[size_t(i)], 77) << i;
}

TEST(MatMulNBitsImport, TypedZeroPointsAndGIdxKeepTheirMeaning) {
  // g_idx picks the scale / zero column of each k; codes stay in place.
  MatMulNBitsTensors t;
  t.n = 1;
  t.k = 32;
  t.bits = 4;
  t.block_size = 16;
  t.zero_kind = ZeroPointKind::kFloat;
  t.b.assign(16, 0x99);  // every code 9
  t.scales = {1.0f, 3.0f};
  t.zero_points_typed = {7.5f, 2.25f};
  for (int kk = 0; kk < 32; ++kk) t.g_idx.push_back(kk % 2);  // balanced: 16 rows each
  QuantizedWeight w;
  const Status st = import_matmul_nbits(t, &w);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(w.zero_kind, ZeroPointKind::kFloat);
  EXPECT_DOUBLE_EQ(w.dequantized(0, 0), (9 - 7.5) * 1.0);
  EXPECT_DOUBLE_EQ(w.dequantized(0, 1), (9 - 2.25) * 3.0);
  EXPECT_EQ(w.g_idx, t.g_idx);
}

struct BadCase {
  std::string name;
  std::function<void(MatMulNBitsTensors&)> change;
  StatusCode code;
  std::string expect_in_message;
};

TEST(MatMulNBitsBadInput, ImportRejectsMalformedTensors) {
  std::mt19937_64 rng(testing::test_seed() + 3004);
  using T = MatMulNBitsTensors;
  const StatusCode kInvalid = StatusCode::kInvalidArgument;
  const std::vector<BadCase> cases = {
      {"B one byte short", [](T& t) { t.b.pop_back(); }, kInvalid, "B has"},
      {"B one byte long", [](T& t) { t.b.push_back(0); }, kInvalid, "B has"},
      {"scales wrong size", [](T& t) { t.scales.resize(3); }, kInvalid, "scales"},
      {"block_size 48", [](T& t) { t.block_size = 48; }, kInvalid, "block_size"},
      {"block_size 8", [](T& t) { t.block_size = 8; }, kInvalid, "block_size"},
      {"block_size 512", [](T& t) { t.block_size = 512; }, kInvalid, "block_size"},
      {"bits 3", [](T& t) { t.bits = 3; }, kInvalid, "bits"},
      {"bits 2", [](T& t) { t.bits = 2; }, kInvalid, "bits"},
      {"k zero", [](T& t) { t.k = 0; }, kInvalid, "K="},
      {"n negative", [](T& t) { t.n = -3; }, kInvalid, "N="},
      {"packed zero_points wrong size",
       [](T& t) { t.zero_points_packed.push_back(0); }, kInvalid, "zero_points"},
      {"zero kind none with packed data",
       [](T& t) { t.zero_kind = ZeroPointKind::kNone; }, kInvalid, "zero_points"},
      {"typed zero_points wrong size",
       [](T& t) {
         t.zero_kind = ZeroPointKind::kFloat;
         t.zero_points_packed.clear();
         t.zero_points_typed.assign(5, 1.0f);
       },
       kInvalid, "typed zero_points"},
      {"typed zero point NaN",
       [](T& t) {
         t.zero_kind = ZeroPointKind::kFloat;
         t.zero_points_packed.clear();
         t.zero_points_typed.assign(t.scales.size(), 7.0f);
         t.zero_points_typed[4] = std::nanf("");
       },
       kInvalid, "finite"},
      {"scale infinite", [](T& t) { t.scales[1] = INFINITY; }, kInvalid, "finite"},
      {"g_idx out of range", [](T& t) { t.g_idx[9] = int32_t(t.k_blocks()); }, kInvalid,
       "g_idx[9]"},
      {"g_idx negative", [](T& t) { t.g_idx[0] = -1; }, kInvalid, "out of range"},
      {"g_idx wrong length", [](T& t) { t.g_idx.pop_back(); }, kInvalid, "g_idx has"},
      {"g_idx unbalanced",
       [](T& t) {
         for (auto& g : t.g_idx) g = 0;
       },
       StatusCode::kUnsupported, "act-order"},
      {"zero kind out of enum", [](T& t) { t.zero_kind = static_cast<ZeroPointKind>(7); },
       kInvalid, "zero_kind"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    // K = 200, block 64: 4 blocks, the last one partial; packed 4-bit zero points, act-order.
    MatMulNBitsTensors t = raw_tensors(rng, 4, 64, ZeroPointKind::kInteger, true, 200, 6);
    {
      QuantizedWeight ok_w;
      ASSERT_TRUE(import_matmul_nbits(t, &ok_w).ok()) << "the unmodified tensors must import";
    }
    c.change(t);
    QuantizedWeight w;
    w.n = 12345;  // a failed import must leave *out alone
    const Status st = import_matmul_nbits(t, &w);
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.code(), c.code) << st.to_string();
    EXPECT_NE(st.message().find(c.expect_in_message), std::string::npos) << st.message();
    EXPECT_EQ(w.n, 12345);
  }
}

TEST(MatMulNBitsBadInput, NullOutAndUnexportableWeights) {
  std::mt19937_64 rng(testing::test_seed() + 3005);
  const MatMulNBitsTensors t = raw_tensors(rng, 8, 32, ZeroPointKind::kNone, false, 64, 4);
  Status st = import_matmul_nbits(t, nullptr);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("null"), std::string::npos) << st.message();

  QuantizedWeight w;
  ASSERT_TRUE(import_matmul_nbits(t, &w).ok());
  st = export_matmul_nbits(w, nullptr);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("null"), std::string::npos) << st.message();

  // Channelwise has no MatMulNBits block size.
  testing::RandomWeightSpec spec;
  spec.n = 8;
  spec.k = 64;
  spec.group_size = kChannelwise;
  MatMulNBitsTensors out;
  st = export_matmul_nbits(testing::random_weight(rng, spec), &out);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("block_size"), std::string::npos) << st.message();

  // A weight that fails validate() is not exported.
  QuantizedWeight broken = w;
  broken.codes.pop_back();
  st = export_matmul_nbits(broken, &out);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("codes"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace sailfish
