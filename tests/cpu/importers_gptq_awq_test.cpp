// GPTQ and AWQ importers / exporters: round trips both ways, hand-checked bit positions, the v1
// zero point offset, and malformed input that must come back as a Status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sailfish/importers.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

struct Shape {
  int64_t n, k;
};

const char* convention_name(GptqZeroConvention c) {
  return c == GptqZeroConvention::kV1MinusOne ? "v1" : "v2";
}

std::string describe(const testing::RandomWeightSpec& s) {
  return "n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         " bits=" + std::to_string(s.bits) + " group_size=" + std::to_string(s.group_size) +
         " zero_kind=" + zero_point_kind_name(s.zero_kind) +
         " act_order=" + std::to_string(s.act_order);
}

bool contains(const Status& st, const std::string& word) {
  return st.message().find(word) != std::string::npos;
}

// Expects a failed Status whose message holds every word in `words`.
void expect_error(const Status& st, std::initializer_list<const char*> words) {
  EXPECT_FALSE(st.ok());
  for (const char* word : words) {
    EXPECT_TRUE(contains(st, word)) << "message lacks \"" << word << "\": " << st.to_string();
  }
}

// Random int32 words: every bit of a GPTQ / AWQ word is a code when the shape fills whole words.
std::vector<int32_t> random_words(std::mt19937_64& rng, size_t count) {
  std::uniform_int_distribution<uint32_t> dist;
  std::vector<int32_t> words(count);
  for (auto& w : words) w = static_cast<int32_t>(dist(rng));
  return words;
}

std::vector<float> random_scales(std::mt19937_64& rng, size_t count) {
  std::vector<float> scales(count);
  std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
  for (auto& s : scales) s = dist(rng);
  return scales;
}

// A balanced act-order g_idx: group g holds min(group_size, k - g*group_size) rows, shuffled.
std::vector<int32_t> random_g_idx(std::mt19937_64& rng, int64_t k, int group_size) {
  std::vector<int32_t> g_idx(static_cast<size_t>(k));
  for (int64_t kk = 0; kk < k; ++kk) g_idx[kk] = static_cast<int32_t>(kk / group_size);
  std::shuffle(g_idx.begin(), g_idx.end(), rng);
  return g_idx;
}

int64_t groups_of(int64_t k, int group_size) {
  return group_size == kChannelwise ? 1 : (k + group_size - 1) / group_size;
}

// A weight with all codes 0, unit scales and the given shape; the hand-built tests set codes.
QuantizedWeight blank_weight(int64_t n, int64_t k, int bits, int group_size) {
  QuantizedWeight w;
  w.n = n;
  w.k = k;
  w.bits = bits;
  w.group_size = group_size;
  w.codes.assign(static_cast<size_t>(n * k), 0);
  w.scales.assign(static_cast<size_t>(w.num_groups() * n), 1.0f);
  return w;
}

// A small valid GPTQ checkpoint for the bad-input tests to break one field of.
GptqTensors valid_gptq(std::mt19937_64& rng) {
  testing::RandomWeightSpec spec;
  spec.n = 8;
  spec.k = 64;
  spec.bits = 4;
  spec.group_size = 32;
  spec.zero_kind = ZeroPointKind::kInteger;
  GptqTensors t;
  const Status st = export_gptq(testing::random_weight(rng, spec),
                                GptqZeroConvention::kV1MinusOne, &t);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return t;
}

AwqTensors valid_awq(std::mt19937_64& rng) {
  testing::RandomWeightSpec spec;
  spec.n = 16;
  spec.k = 64;
  spec.bits = 4;
  spec.group_size = 32;
  spec.zero_kind = ZeroPointKind::kInteger;
  AwqTensors t;
  const Status st = export_awq(testing::random_weight(rng, spec), &t);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return t;
}

// ---- GPTQ ---------------------------------------------------------------------------------------

TEST(GptqImport, ExportThenImportReproducesTheWeight) {
  std::mt19937_64 rng(testing::test_seed() + 701);
  // GPTQ packs along K and (qzeros) along N: both must fill whole words, 8 codes for int4.
  const Shape shapes[] = {{72, 40}, {8, 264}, {32, 256}, {24, 96}};
  for (GptqZeroConvention convention :
       {GptqZeroConvention::kV1MinusOne, GptqZeroConvention::kV2Exact}) {
    for (int bits : {4, 8}) {
      for (int group_size : {32, 64, 128, 256, kChannelwise}) {
        for (ZeroPointKind zk : {ZeroPointKind::kNone, ZeroPointKind::kInteger}) {
          for (bool act_order : {false, true}) {
            for (const Shape& shape : shapes) {
              testing::RandomWeightSpec spec;
              spec.n = shape.n;
              spec.k = shape.k;
              spec.bits = bits;
              spec.group_size = group_size;
              spec.zero_kind = zk;
              spec.act_order = act_order;
              SCOPED_TRACE(describe(spec) + " " + convention_name(convention));
              const QuantizedWeight w = testing::random_weight(rng, spec);
              GptqTensors t;
              Status st = export_gptq(w, convention, &t);
              ASSERT_TRUE(st.ok()) << st.to_string();
              EXPECT_EQ(t.qzeros.size(),
                        static_cast<size_t>(w.num_groups() * w.n * bits / 32));
              QuantizedWeight back;
              st = import_gptq(t, &back);
              ASSERT_TRUE(st.ok()) << st.to_string();
              EXPECT_TRUE(back == w);
            }
          }
        }
      }
    }
  }
}

TEST(GptqImport, ImportThenExportReproducesTheTensorsBitForBit) {
  std::mt19937_64 rng(testing::test_seed() + 702);
  const Shape shapes[] = {{72, 40}, {8, 264}, {16, 512}};
  for (GptqZeroConvention convention :
       {GptqZeroConvention::kV1MinusOne, GptqZeroConvention::kV2Exact}) {
    for (int bits : {4, 8}) {
      for (int group_size : {16, 32, 128, kChannelwise}) {
        for (bool act_order : {false, true}) {
          if (act_order && group_size == kChannelwise) continue;
          for (const Shape& shape : shapes) {
            SCOPED_TRACE("n=" + std::to_string(shape.n) + " k=" + std::to_string(shape.k) +
                         " bits=" + std::to_string(bits) + " gs=" + std::to_string(group_size) +
                         " act_order=" + std::to_string(act_order) + " " +
                         convention_name(convention));
            const int64_t groups = groups_of(shape.k, group_size);
            GptqTensors t;
            t.n = shape.n;
            t.k = shape.k;
            t.bits = bits;
            t.group_size = group_size;
            t.zero_convention = convention;
            t.qweight = random_words(rng, static_cast<size_t>(shape.k * bits / 32 * shape.n));
            t.qzeros = random_words(rng, static_cast<size_t>(groups * shape.n * bits / 32));
            t.scales = random_scales(rng, static_cast<size_t>(groups * shape.n));
            if (act_order) t.g_idx = random_g_idx(rng, shape.k, group_size);

            QuantizedWeight w;
            Status st = import_gptq(t, &w);
            ASSERT_TRUE(st.ok()) << st.to_string();
            GptqTensors again;
            st = export_gptq(w, convention, &again);
            ASSERT_TRUE(st.ok()) << st.to_string();
            EXPECT_EQ(again.n, t.n);
            EXPECT_EQ(again.k, t.k);
            EXPECT_EQ(again.bits, t.bits);
            EXPECT_EQ(again.group_size, t.group_size);
            EXPECT_EQ(again.qweight, t.qweight);
            EXPECT_EQ(again.qzeros, t.qzeros);
            EXPECT_EQ(again.scales, t.scales);
            EXPECT_EQ(again.g_idx, t.g_idx);
          }
        }
      }
    }
  }
}

TEST(GptqImport, Int4CodesSitAtTheirDocumentedBitOffsets) {
  QuantizedWeight w = blank_weight(/*n=*/8, /*k=*/16, /*bits=*/4, /*group_size=*/16);
  w.codes[3 * 16 + 10] = 0xB;  // column 3, k 10: word row 1, nibble 2
  w.codes[5 * 16 + 7] = 0xF;   // column 5, k 7: word row 0, top nibble (the sign bit)
  GptqTensors t;
  ASSERT_TRUE(export_gptq(w, GptqZeroConvention::kV2Exact, &t).ok());
  ASSERT_EQ(t.qweight.size(), 16u);  // [k/8 = 2][n = 8]
  for (size_t i = 0; i < t.qweight.size(); ++i) {
    int32_t expected = 0;
    if (i == 1 * 8 + 3) expected = 0xB00;
    if (i == 0 * 8 + 5) expected = static_cast<int32_t>(0xF0000000u);
    EXPECT_EQ(t.qweight[i], expected) << "word " << i;
  }
  // Symmetric: qzeros still written, every nibble the code bias 8 (v2) or 8 - 1 (v1).
  ASSERT_EQ(t.qzeros.size(), 1u);
  EXPECT_EQ(t.qzeros[0], static_cast<int32_t>(0x88888888u));
  GptqTensors v1;
  ASSERT_TRUE(export_gptq(w, GptqZeroConvention::kV1MinusOne, &v1).ok());
  EXPECT_EQ(v1.qzeros[0], 0x77777777);
  EXPECT_EQ(v1.qweight, t.qweight);

  // And back: a negative int32 word must not smear its sign into other codes.
  QuantizedWeight back;
  ASSERT_TRUE(import_gptq(t, &back).ok());
  EXPECT_EQ(back.codes[5 * 16 + 7], 0xF);
  EXPECT_EQ(back.codes[5 * 16 + 6], 0);
  EXPECT_EQ(back.zero_kind, ZeroPointKind::kNone);
  EXPECT_TRUE(back == w);
}

TEST(GptqImport, Int8CodesAndZerosSitAtTheirDocumentedBitOffsets) {
  QuantizedWeight w = blank_weight(/*n=*/4, /*k=*/16, /*bits=*/8, /*group_size=*/16);
  w.codes[2 * 16 + 7] = 0xAB;  // column 2, k 7: word row 1, byte 3
  w.zero_kind = ZeroPointKind::kInteger;
  w.zero_codes = {128, 3, 128, 128};  // one group; column 1 differs -> byte 1 of the qzeros word
  GptqTensors t;
  ASSERT_TRUE(export_gptq(w, GptqZeroConvention::kV2Exact, &t).ok());
  ASSERT_EQ(t.qweight.size(), 16u);  // [k/4 = 4][n = 4]
  for (size_t i = 0; i < t.qweight.size(); ++i) {
    EXPECT_EQ(t.qweight[i], i == 1 * 4 + 2 ? static_cast<int32_t>(0xAB000000u) : 0) << i;
  }
  ASSERT_EQ(t.qzeros.size(), 1u);
  EXPECT_EQ(t.qzeros[0], static_cast<int32_t>(0x80800380u));
  GptqTensors v1;
  ASSERT_TRUE(export_gptq(w, GptqZeroConvention::kV1MinusOne, &v1).ok());
  EXPECT_EQ(v1.qzeros[0], 0x7F7F027F);
}

TEST(GptqImport, ZeroPointsPackAlongN) {
  QuantizedWeight w = blank_weight(/*n=*/16, /*k=*/8, /*bits=*/4, /*group_size=*/16);
  w.zero_kind = ZeroPointKind::kInteger;
  w.zero_codes.assign(16, 8);
  w.zero_codes[9] = 3;  // column 9: word 1, nibble 1
  GptqTensors t;
  ASSERT_TRUE(export_gptq(w, GptqZeroConvention::kV2Exact, &t).ok());
  ASSERT_EQ(t.qzeros.size(), 2u);
  EXPECT_EQ(t.qzeros[0], static_cast<int32_t>(0x88888888u));
  EXPECT_EQ(t.qzeros[1], static_cast<int32_t>(0x88888838u));
}

GptqTensors tiny_gptq(int32_t qzeros_word, GptqZeroConvention convention) {
  GptqTensors t;
  t.n = 8;
  t.k = 8;
  t.bits = 4;
  t.group_size = 16;  // one group (k < group_size)
  t.qweight.assign(8, 0);
  t.qzeros = {qzeros_word};
  t.scales.assign(8, 0.5f);
  t.zero_convention = convention;
  return t;
}

TEST(GptqImport, V1StoresZeroPointMinusOne) {
  // v1 stored 7 -> zero point 8 = code bias -> symmetric.
  QuantizedWeight w;
  ASSERT_TRUE(import_gptq(tiny_gptq(0x77777777, GptqZeroConvention::kV1MinusOne), &w).ok());
  EXPECT_EQ(w.zero_kind, ZeroPointKind::kNone);
  EXPECT_TRUE(w.zero_codes.empty());
  EXPECT_EQ(w.zero_point(0, 3), 8.0);

  // The same word under v2 is an asymmetric weight with zero point 7.
  ASSERT_TRUE(import_gptq(tiny_gptq(0x77777777, GptqZeroConvention::kV2Exact), &w).ok());
  EXPECT_EQ(w.zero_kind, ZeroPointKind::kInteger);
  EXPECT_EQ(w.zero_codes, std::vector<uint8_t>(8, 7));

  // v1 stored 15 + 1 wraps to zero point 0 (AutoGPTQ's in-word wraparound), and exports back.
  const GptqTensors wrap = tiny_gptq(0x7777777F, GptqZeroConvention::kV1MinusOne);
  ASSERT_TRUE(import_gptq(wrap, &w).ok());
  EXPECT_EQ(w.zero_kind, ZeroPointKind::kInteger);
  EXPECT_EQ(w.zero_codes[0], 0);
  EXPECT_EQ(w.zero_codes[1], 8);
  GptqTensors again;
  ASSERT_TRUE(export_gptq(w, GptqZeroConvention::kV1MinusOne, &again).ok());
  EXPECT_EQ(again.qzeros, wrap.qzeros);
}

TEST(GptqImport, EmptyQzerosMeansSymmetric) {
  GptqTensors t = tiny_gptq(0, GptqZeroConvention::kV2Exact);
  t.qzeros.clear();
  t.qweight[2] = 0x12345678;  // column 2, k 0..7 = 8, 7, 6, 5, 4, 3, 2, 1
  QuantizedWeight w;
  ASSERT_TRUE(import_gptq(t, &w).ok());
  EXPECT_EQ(w.zero_kind, ZeroPointKind::kNone);
  for (int kk = 0; kk < 8; ++kk) EXPECT_EQ(w.codes[2 * 8 + kk], 8 - kk) << kk;
  // Exporting writes the code bias explicitly, as checkpoints do.
  GptqTensors again;
  ASSERT_TRUE(export_gptq(w, GptqZeroConvention::kV2Exact, &again).ok());
  EXPECT_EQ(again.qzeros, std::vector<int32_t>{static_cast<int32_t>(0x88888888u)});
}

TEST(GptqImport, ChannelwiseDropsTheTrivialGIdx) {
  // AutoGPTQ writes g_idx = 0 everywhere for group_size -1; the canonical form carries none.
  GptqTensors t = tiny_gptq(0x77777777, GptqZeroConvention::kV1MinusOne);
  t.group_size = kChannelwise;
  t.g_idx.assign(8, 0);
  QuantizedWeight w;
  const Status st = import_gptq(t, &w);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_TRUE(w.g_idx.empty());
}

// ---- AWQ ----------------------------------------------------------------------------------------

TEST(AwqImport, ExportThenImportReproducesTheWeight) {
  std::mt19937_64 rng(testing::test_seed() + 711);
  // AWQ packs along N only: n a multiple of 8, k anything.
  const Shape shapes[] = {{72, 40}, {8, 264}, {16, 37}, {24, 1}};
  for (int group_size : {16, 32, 64, 128, 256, kChannelwise}) {
    for (ZeroPointKind zk : {ZeroPointKind::kNone, ZeroPointKind::kInteger}) {
      for (const Shape& shape : shapes) {
        testing::RandomWeightSpec spec;
        spec.n = shape.n;
        spec.k = shape.k;
        spec.bits = 4;
        spec.group_size = group_size;
        spec.zero_kind = zk;
        SCOPED_TRACE(describe(spec));
        const QuantizedWeight w = testing::random_weight(rng, spec);
        AwqTensors t;
        Status st = export_awq(w, &t);
        ASSERT_TRUE(st.ok()) << st.to_string();
        QuantizedWeight back;
        st = import_awq(t, &back);
        ASSERT_TRUE(st.ok()) << st.to_string();
        // AWQ always stores zero points: a symmetric weight comes back with explicit 8s.
        QuantizedWeight expected = w;
        if (zk == ZeroPointKind::kNone) {
          expected.zero_kind = ZeroPointKind::kInteger;
          expected.zero_codes.assign(static_cast<size_t>(w.num_groups() * w.n), 8);
        }
        EXPECT_TRUE(back == expected);
      }
    }
  }
}

TEST(AwqImport, ImportThenExportReproducesTheTensorsBitForBit) {
  std::mt19937_64 rng(testing::test_seed() + 712);
  const Shape shapes[] = {{72, 40}, {8, 264}, {16, 37}};
  for (int group_size : {16, 64, 128, kChannelwise}) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE("n=" + std::to_string(shape.n) + " k=" + std::to_string(shape.k) +
                   " gs=" + std::to_string(group_size));
      const int64_t groups = groups_of(shape.k, group_size);
      AwqTensors t;
      t.n = shape.n;
      t.k = shape.k;
      t.group_size = group_size;
      t.qweight = random_words(rng, static_cast<size_t>(shape.k * shape.n / 8));
      t.qzeros = random_words(rng, static_cast<size_t>(groups * shape.n / 8));
      t.scales = random_scales(rng, static_cast<size_t>(groups * shape.n));
      QuantizedWeight w;
      Status st = import_awq(t, &w);
      ASSERT_TRUE(st.ok()) << st.to_string();
      EXPECT_EQ(w.zero_kind, ZeroPointKind::kInteger);
      AwqTensors again;
      st = export_awq(w, &again);
      ASSERT_TRUE(st.ok()) << st.to_string();
      EXPECT_EQ(again.n, t.n);
      EXPECT_EQ(again.k, t.k);
      EXPECT_EQ(again.group_size, t.group_size);
      EXPECT_EQ(again.qweight, t.qweight);
      EXPECT_EQ(again.qzeros, t.qzeros);
      EXPECT_EQ(again.scales, t.scales);
    }
  }
}

TEST(AwqImport, NibblesFollowTheInterleavedColumnOrder) {
  QuantizedWeight w = blank_weight(/*n=*/16, /*k=*/2, /*bits=*/4, /*group_size=*/16);
  for (int c = 0; c < 8; ++c) w.codes[c * 2 + 0] = static_cast<uint8_t>(c + 1);  // k 0: c + 1
  w.codes[11 * 2 + 1] = 0xF;  // column 11 = word 1, column 3 of it -> nibble 5, row k 1
  w.zero_kind = ZeroPointKind::kInteger;
  w.zero_codes.assign(16, 8);
  w.zero_codes[2] = 5;  // column 2 -> nibble 1 of qzeros word 0
  AwqTensors t;
  ASSERT_TRUE(export_awq(w, &t).ok());
  ASSERT_EQ(t.qweight.size(), 4u);  // [k = 2][n/8 = 2]
  // Nibbles 0..7 hold columns 0, 2, 4, 6, 1, 3, 5, 7, whose codes are 1, 3, 5, 7, 2, 4, 6, 8.
  EXPECT_EQ(t.qweight[0], static_cast<int32_t>(0x86427531u));
  EXPECT_EQ((static_cast<uint32_t>(t.qweight[0]) >> 4) & 0xF, 3u);  // nibble 1 = column 2
  EXPECT_EQ((static_cast<uint32_t>(t.qweight[0]) >> 16) & 0xF, 2u);  // nibble 4 = column 1
  EXPECT_EQ(t.qweight[1], 0);
  EXPECT_EQ(t.qweight[2], 0);
  EXPECT_EQ(t.qweight[3], 0x00F00000);
  ASSERT_EQ(t.qzeros.size(), 2u);
  EXPECT_EQ(t.qzeros[0], static_cast<int32_t>(0x88888858u));
  EXPECT_EQ(t.qzeros[1], static_cast<int32_t>(0x88888888u));

  // Reading: a lone nibble 1 is column 2; nibble 4 is column 1.
  AwqTensors in = t;
  in.qweight = {0x00000010, 0x00030000, 0, 0};
  QuantizedWeight back;
  ASSERT_TRUE(import_awq(in, &back).ok());
  for (int c = 0; c < 16; ++c) {
    const int expected = c == 2 ? 1 : (c == 9 ? 3 : 0);  // word 1 nibble 4 -> column 8 + 1
    EXPECT_EQ(back.codes[c * 2 + 0], expected) << "column " << c;
    EXPECT_EQ(back.codes[c * 2 + 1], 0) << "column " << c;
  }
  EXPECT_EQ(back.zero_codes[2], 5);
  EXPECT_EQ(back.zero_codes[0], 8);
}

TEST(AwqImport, ZeroPointsOfEightStayExplicit) {
  // Unlike GPTQ, AWQ zero points are always data: all-8 stays kInteger.
  std::mt19937_64 rng(testing::test_seed() + 713);
  AwqTensors t = valid_awq(rng);
  std::fill(t.qzeros.begin(), t.qzeros.end(), static_cast<int32_t>(0x88888888u));
  QuantizedWeight w;
  ASSERT_TRUE(import_awq(t, &w).ok());
  EXPECT_EQ(w.zero_kind, ZeroPointKind::kInteger);
  EXPECT_EQ(w.zero_codes, std::vector<uint8_t>(w.zero_codes.size(), 8));
}

// ---- malformed input ----------------------------------------------------------------------------

TEST(GptqAwqBadInput, GptqWrongQweightSizeNamesFoundAndExpected) {
  std::mt19937_64 rng(testing::test_seed() + 721);
  GptqTensors t = valid_gptq(rng);  // qweight [64/8 = 8][8] = 64 words
  t.qweight.pop_back();
  QuantizedWeight w;
  expect_error(import_gptq(t, &w), {"qweight", "63", "64"});
  t.qweight.resize(1000);
  expect_error(import_gptq(t, &w), {"qweight", "1000", "64"});
}

TEST(GptqAwqBadInput, GptqWrongScalesOrQzerosSize) {
  std::mt19937_64 rng(testing::test_seed() + 722);
  GptqTensors t = valid_gptq(rng);
  t.scales.pop_back();  // [2][8] = 16
  QuantizedWeight w;
  expect_error(import_gptq(t, &w), {"scales", "15", "16"});
  t = valid_gptq(rng);
  t.qzeros.push_back(0);  // [2][1] = 2
  expect_error(import_gptq(t, &w), {"qzeros", "3", "2"});
}

TEST(GptqAwqBadInput, GptqKMustFillWholeWords) {
  std::mt19937_64 rng(testing::test_seed() + 723);
  GptqTensors t = valid_gptq(rng);
  t.k = 60;  // not a multiple of 8
  QuantizedWeight w;
  expect_error(import_gptq(t, &w), {"k", "multiple of 8"});
  t.bits = 8;
  t.k = 62;  // not a multiple of 4
  expect_error(import_gptq(t, &w), {"multiple of 4"});
  // And on export: a weight with k = 12 cannot be written as int4 GPTQ.
  testing::RandomWeightSpec spec;
  spec.n = 8;
  spec.k = 12;
  spec.group_size = 16;
  GptqTensors out;
  expect_error(export_gptq(testing::random_weight(rng, spec), GptqZeroConvention::kV2Exact, &out),
               {"multiple of 8"});
}

TEST(GptqAwqBadInput, GptqNMustFillWholeZeroWords) {
  std::mt19937_64 rng(testing::test_seed() + 724);
  testing::RandomWeightSpec spec;
  spec.n = 12;
  spec.k = 64;
  spec.group_size = 32;
  GptqTensors out;
  expect_error(export_gptq(testing::random_weight(rng, spec), GptqZeroConvention::kV2Exact, &out),
               {"qzeros", "multiple of 8"});
  GptqTensors t;
  t.n = 12;
  t.k = 8;
  t.group_size = 32;
  t.qweight.assign(12, 0);
  t.scales.assign(12, 1.0f);
  t.qzeros.assign(2, 0);
  QuantizedWeight w;
  expect_error(import_gptq(t, &w), {"n", "multiple of 8"});
  t.qzeros.clear();  // without qzeros nothing packs along N: fine
  EXPECT_TRUE(import_gptq(t, &w).ok());
}

TEST(GptqAwqBadInput, AwqNMustBeAMultipleOf8) {
  AwqTensors t;
  t.n = 12;
  t.k = 4;
  t.group_size = 16;
  t.qweight.assign(6, 0);
  t.qzeros.assign(2, 0);
  t.scales.assign(12, 1.0f);
  QuantizedWeight w;
  expect_error(import_awq(t, &w), {"n", "multiple of 8"});
  QuantizedWeight dense = blank_weight(12, 4, 4, 16);
  AwqTensors out;
  expect_error(export_awq(dense, &out), {"multiple of 8"});
}

TEST(GptqAwqBadInput, AwqWrongTensorSizes) {
  std::mt19937_64 rng(testing::test_seed() + 725);
  AwqTensors t = valid_awq(rng);  // qweight [64][2], qzeros [2][2], scales [2][16]
  t.qweight.pop_back();
  QuantizedWeight w;
  expect_error(import_awq(t, &w), {"qweight", "127", "128"});
  t = valid_awq(rng);
  t.qzeros.clear();  // AWQ has no symmetric form without qzeros
  expect_error(import_awq(t, &w), {"qzeros", "0", "4"});
  t = valid_awq(rng);
  t.scales.push_back(1.0f);
  expect_error(import_awq(t, &w), {"scales", "33", "32"});
}

TEST(GptqAwqBadInput, GptqGIdxWrongLengthOrOutOfRange) {
  std::mt19937_64 rng(testing::test_seed() + 726);
  GptqTensors t = valid_gptq(rng);
  t.g_idx = random_g_idx(rng, t.k, t.group_size);
  t.g_idx.pop_back();
  QuantizedWeight w;
  expect_error(import_gptq(t, &w), {"g_idx", "63", "64"});
  t.g_idx = random_g_idx(rng, t.k, t.group_size);
  t.g_idx[5] = 2;  // two groups: 0 and 1
  expect_error(import_gptq(t, &w), {"g_idx", "out of range"});
  t.g_idx[5] = -1;
  expect_error(import_gptq(t, &w), {"g_idx", "out of range"});
}

TEST(GptqAwqBadInput, UnsupportedBitsAndGroupSizes) {
  std::mt19937_64 rng(testing::test_seed() + 727);
  GptqTensors t = valid_gptq(rng);
  QuantizedWeight w;
  for (int bits : {3, 0, 2, 16, -4}) {
    t.bits = bits;
    expect_error(import_gptq(t, &w), {"bits"});
  }
  t = valid_gptq(rng);
  t.group_size = 48;
  expect_error(import_gptq(t, &w), {"group_size", "48"});
  t.group_size = 0;
  expect_error(import_gptq(t, &w), {"group_size"});
  AwqTensors a = valid_awq(rng);
  a.group_size = 48;
  expect_error(import_awq(a, &w), {"group_size", "48"});
}

TEST(GptqAwqBadInput, NullOut) {
  std::mt19937_64 rng(testing::test_seed() + 728);
  const GptqTensors g = valid_gptq(rng);
  const AwqTensors a = valid_awq(rng);
  QuantizedWeight w;
  ASSERT_TRUE(import_gptq(g, &w).ok());
  expect_error(import_gptq(g, nullptr), {"null"});
  expect_error(export_gptq(w, GptqZeroConvention::kV1MinusOne, nullptr), {"null"});
  expect_error(import_awq(a, nullptr), {"null"});
  expect_error(export_awq(w, nullptr), {"null"});
}

TEST(GptqAwqBadInput, ExportRefusesWhatTheFormatCannotHold) {
  std::mt19937_64 rng(testing::test_seed() + 729);
  testing::RandomWeightSpec spec;
  spec.n = 16;
  spec.k = 64;
  spec.group_size = 32;
  spec.zero_kind = ZeroPointKind::kFloat;
  const QuantizedWeight fractional = testing::random_weight(rng, spec);
  GptqTensors g;
  AwqTensors a;
  expect_error(export_gptq(fractional, GptqZeroConvention::kV2Exact, &g), {"GPTQ", "fractional"});
  expect_error(export_awq(fractional, &a), {"AWQ", "fractional"});

  spec.zero_kind = ZeroPointKind::kInteger;
  spec.bits = 8;
  expect_error(export_awq(testing::random_weight(rng, spec), &a), {"4-bit", "8"});

  spec.bits = 4;
  spec.act_order = true;
  expect_error(export_awq(testing::random_weight(rng, spec), &a), {"g_idx"});
}

TEST(GptqAwqBadInput, ExportValidatesItsInput) {
  std::mt19937_64 rng(testing::test_seed() + 730);
  testing::RandomWeightSpec spec;
  spec.n = 16;
  spec.k = 64;
  spec.group_size = 32;
  QuantizedWeight w = testing::random_weight(rng, spec);
  w.codes.pop_back();
  GptqTensors g;
  AwqTensors a;
  expect_error(export_gptq(w, GptqZeroConvention::kV2Exact, &g), {"codes"});
  expect_error(export_awq(w, &a), {"codes"});
  w = testing::random_weight(rng, spec);
  w.codes[7] = 16;  // out of int4 range: would corrupt a neighbouring nibble if packed
  expect_error(export_gptq(w, GptqZeroConvention::kV2Exact, &g), {"code"});
  expect_error(export_awq(w, &a), {"code"});
}

TEST(GptqAwqBadInput, NonPositiveAndOverflowingShapes) {
  std::mt19937_64 rng(testing::test_seed() + 731);
  GptqTensors g = valid_gptq(rng);
  AwqTensors a = valid_awq(rng);
  QuantizedWeight w;
  g.k = 0;
  expect_error(import_gptq(g, &w), {"positive"});
  g.k = -8;
  expect_error(import_gptq(g, &w), {"positive"});
  a.n = -16;
  expect_error(import_awq(a, &w), {"positive"});
  // Sizes whose products wrap int64 must be rejected, not wrapped into a matching count.
  g.k = int64_t{1} << 40;
  g.n = int64_t{1} << 40;
  expect_error(import_gptq(g, &w), {"too large"});
  a.k = int64_t{1} << 40;
  a.n = int64_t{1} << 40;
  expect_error(import_awq(a, &w), {"too large"});
}

TEST(GptqAwqBadInput, NonFiniteScaleIsCaughtByValidate) {
  std::mt19937_64 rng(testing::test_seed() + 732);
  GptqTensors g = valid_gptq(rng);
  g.scales[3] = std::numeric_limits<float>::infinity();
  QuantizedWeight w;
  expect_error(import_gptq(g, &w), {"finite"});
  AwqTensors a = valid_awq(rng);
  a.scales[0] = std::numeric_limits<float>::quiet_NaN();
  expect_error(import_awq(a, &w), {"finite"});
}

TEST(GptqAwqBadInput, FailedImportLeavesOutUntouched) {
  std::mt19937_64 rng(testing::test_seed() + 733);
  const GptqTensors good = valid_gptq(rng);
  QuantizedWeight w;
  ASSERT_TRUE(import_gptq(good, &w).ok());
  const QuantizedWeight before = w;
  GptqTensors bad = good;
  bad.g_idx.assign(static_cast<size_t>(bad.k), 7);  // out of range: fails in validate()
  EXPECT_FALSE(import_gptq(bad, &w).ok());
  EXPECT_TRUE(w == before);
}

}  // namespace
}  // namespace sailfish
