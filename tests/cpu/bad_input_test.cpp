// Bad input to the host API: every case returns a Status that names the problem; none crashes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "sailfish/packed_format.h"
#include "sailfish/quantize.h"
#include "sailfish/reference.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

QuantizedWeight good_weight() {
  std::mt19937_64 rng(testing::test_seed() + 31);
  testing::RandomWeightSpec spec;
  spec.n = 64;
  spec.k = 256;
  spec.zero_kind = ZeroPointKind::kInteger;
  return random_weight(rng, spec);
}

struct BadCase {
  std::string name;
  std::function<Status()> call;
  std::string expect_in_message;
};

std::vector<BadCase> bad_cases() {
  std::vector<BadCase> cases;
  auto mutate = [&](std::string name, std::function<void(QuantizedWeight&)> change,
                    std::string expect) {
    cases.push_back({std::move(name),
                     [change] {
                       QuantizedWeight w = good_weight();
                       change(w);
                       PackedWeight p;
                       return pack(w, DType::kBF16, &p);
                     },
                     std::move(expect)});
  };
  mutate("bits 3", [](QuantizedWeight& w) { w.bits = 3; }, "bits");
  mutate("bits 16", [](QuantizedWeight& w) { w.bits = 16; }, "bits");
  mutate("group size 48", [](QuantizedWeight& w) { w.group_size = 48; }, "group_size");
  mutate("group size 0", [](QuantizedWeight& w) { w.group_size = 0; }, "group_size");
  mutate("negative n", [](QuantizedWeight& w) { w.n = -64; }, "shape");
  mutate("zero k", [](QuantizedWeight& w) { w.k = 0; }, "shape");
  mutate("codes short", [](QuantizedWeight& w) { w.codes.pop_back(); }, "codes");
  mutate("code out of range", [](QuantizedWeight& w) { w.codes[7] = 16; }, "code 16");
  mutate("scales short", [](QuantizedWeight& w) { w.scales.resize(3); }, "scales");
  mutate("scale nan", [](QuantizedWeight& w) { w.scales[2] = std::nanf(""); }, "finite");
  mutate("zero codes short", [](QuantizedWeight& w) { w.zero_codes.resize(5); }, "zero_codes");
  mutate("zero code too big", [](QuantizedWeight& w) { w.zero_codes[0] = 200; }, "zero point");
  mutate("zero data without kind",
         [](QuantizedWeight& w) { w.zero_kind = ZeroPointKind::kNone; }, "zero");
  mutate("float zero without values",
         [](QuantizedWeight& w) { w.zero_kind = ZeroPointKind::kFloat; }, "zero_values");
  mutate("float zero values beside none",
         [](QuantizedWeight& w) {
           w.zero_values.assign(w.zero_codes.begin(), w.zero_codes.end());
           w.zero_codes.clear();
           w.zero_kind = ZeroPointKind::kNone;
         },
         "zero point data");
  mutate("float zero value nan",
         [](QuantizedWeight& w) {
           w.zero_values.assign(w.zero_codes.begin(), w.zero_codes.end());
           w.zero_codes.clear();
           w.zero_kind = ZeroPointKind::kFloat;
           w.zero_values[9] = std::nanf("");
         },
         "zero value at index 9 is not finite");
  mutate("float zero value infinite",
         [](QuantizedWeight& w) {
           w.zero_values.assign(w.zero_codes.begin(), w.zero_codes.end());
           w.zero_codes.clear();
           w.zero_kind = ZeroPointKind::kFloat;
           w.zero_values.back() = -INFINITY;
         },
         "is not finite");
  mutate("zero kind out of enum",
         [](QuantizedWeight& w) { w.zero_kind = static_cast<ZeroPointKind>(7); }, "zero_kind 7");
  mutate("g_idx wrong length", [](QuantizedWeight& w) { w.g_idx.assign(10, 0); }, "g_idx");
  mutate("g_idx out of range",
         [](QuantizedWeight& w) {
           w.g_idx.resize(256);
           for (int i = 0; i < 256; ++i) w.g_idx[i] = i / 128;
           w.g_idx[5] = 2;
         },
         "out of range");
  mutate("g_idx negative",
         [](QuantizedWeight& w) {
           w.g_idx.resize(256);
           for (int i = 0; i < 256; ++i) w.g_idx[i] = i / 128;
           w.g_idx[0] = -1;
         },
         "out of range");
  mutate("g_idx unbalanced",
         [](QuantizedWeight& w) {
           w.g_idx.assign(256, 0);
           w.g_idx[255] = 1;
         },
         "act-order");
  mutate("g_idx with channelwise",
         [](QuantizedWeight& w) {
           w.group_size = kChannelwise;
           w.scales.resize(64);
           w.zero_codes.resize(64);
           w.g_idx.assign(256, 0);
         },
         "channelwise");
  cases.push_back({"pack to fp32 scales",
                   [] {
                     PackedWeight p;
                     return pack(good_weight(), DType::kF32, &p);
                   },
                   "fp16 or bf16"});
  cases.push_back({"pack null out", [] { return pack(good_weight(), DType::kBF16, nullptr); },
                   "null"});
  cases.push_back({"unpack wrong version",
                   [] {
                     PackedWeight p;
                     Status st = pack(good_weight(), DType::kBF16, &p);
                     if (!st.ok()) return st;
                     p.version = 7;
                     QuantizedWeight w;
                     return unpack(p, &w);
                   },
                   "version"});
  cases.push_back({"unpack truncated codes",
                   [] {
                     PackedWeight p;
                     Status st = pack(good_weight(), DType::kBF16, &p);
                     if (!st.ok()) return st;
                     p.codes.resize(p.codes.size() - 1);
                     QuantizedWeight w;
                     return unpack(p, &w);
                   },
                   "codes"});
  cases.push_back({"unpack tampered geometry",
                   [] {
                     PackedWeight p;
                     Status st = pack(good_weight(), DType::kBF16, &p);
                     if (!st.ok()) return st;
                     p.geometry.k_pad = 512;
                     QuantizedWeight w;
                     return unpack(p, &w);
                   },
                   "geometry"});
  cases.push_back({"unpack perm not a permutation",
                   [] {
                     QuantizedWeight w = good_weight();
                     w.g_idx.resize(256);
                     for (int i = 0; i < 256; ++i) w.g_idx[i] = (i * 7) % 2;
                     PackedWeight p;
                     Status st = pack(w, DType::kBF16, &p);
                     if (!st.ok()) return st;
                     p.perm[0] = p.perm[1];
                     return unpack(p, &w);
                   },
                   "permutation"});
  cases.push_back({"quantize nan weight",
                   [] {
                     std::vector<float> v(64 * 64, 0.5f);
                     v[100] = std::nanf("");
                     QuantizedWeight w;
                     return quantize_rtn(v.data(), 64, 64, QuantizeOptions{}, &w);
                   },
                   "finite"});
  cases.push_back({"quantize null weights",
                   [] {
                     QuantizedWeight w;
                     return quantize_rtn(nullptr, 64, 64, QuantizeOptions{}, &w);
                   },
                   "null"});
  // quantize_rtn on a finite 64 x 64 weight with one option out of range.
  auto quantize_with = [&](std::string name, std::function<void(QuantizeOptions&)> change,
                           std::string expect) {
    cases.push_back({std::move(name),
                     [change] {
                       std::vector<float> v(64 * 64, 0.5f);
                       QuantizeOptions options;
                       change(options);
                       QuantizedWeight w;
                       return quantize_rtn(v.data(), 64, 64, options, &w);
                     },
                     std::move(expect)});
  };
  quantize_with("quantize bits 2", [](QuantizeOptions& o) { o.bits = 2; }, "bits");
  quantize_with("quantize scheme out of enum",
                [](QuantizeOptions& o) { o.scheme = static_cast<QuantScheme>(5); },
                "scheme is 5");
  quantize_with("quantize scale dtype out of enum",
                [](QuantizeOptions& o) { o.scale_dtype = static_cast<DType>(9); },
                "scale_dtype is 9");
  // validate(PackedGeometry): each derived field that differs from make()'s is named.
  const auto tampered = [](std::function<void(PackedGeometry&)> change) {
    return [change] {
      PackedGeometry g;
      Status st = PackedGeometry::make(100, 200, 4, 64, &g);
      if (!st.ok()) return st;
      change(g);
      return validate(g);
    };
  };
  cases.push_back({"geometry n_pad", tampered([](PackedGeometry& g) { g.n_pad = 64; }),
                   "geometry is inconsistent"});
  cases.push_back({"geometry k_pad 0", tampered([](PackedGeometry& g) { g.k_pad = 0; }),
                   "geometry is inconsistent"});
  cases.push_back({"geometry n_blocks", tampered([](PackedGeometry& g) { g.n_blocks += 1; }),
                   "geometry is inconsistent"});
  cases.push_back({"geometry k_blocks", tampered([](PackedGeometry& g) { g.k_blocks -= 1; }),
                   "geometry is inconsistent"});
  cases.push_back({"geometry group_rows", tampered([](PackedGeometry& g) { g.group_rows = 128; }),
                   "geometry is inconsistent"});
  cases.push_back({"geometry scale_rows", tampered([](PackedGeometry& g) { g.scale_rows = 1; }),
                   "geometry is inconsistent"});
  cases.push_back({"geometry bits", tampered([](PackedGeometry& g) { g.bits = 2; }), "bits is 2"});
  cases.push_back({"geometry too large",
                   [] {
                     PackedGeometry g;
                     return PackedGeometry::make(int64_t(1) << 20, int64_t(1) << 20, 8, 128, &g);
                   },
                   "too large"});
  cases.push_back({"reference null output",
                   [] {
                     std::vector<double> a(256, 1.0);
                     return reference_gemm(a.data(), 1, good_weight(), nullptr, nullptr);
                   },
                   "null"});
  return cases;
}

TEST(BadInput, EveryCaseIsRefusedWithAMessage) {
  const auto cases = bad_cases();
  EXPECT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    const Status st = c.call();
    EXPECT_FALSE(st.ok()) << c.name;
    EXPECT_NE(st.message().find(c.expect_in_message), std::string::npos)
        << c.name << ": got \"" << st.message() << "\", expected it to mention \""
        << c.expect_in_message << "\"";
  }
}

TEST(BadInput, GoodWeightIsAccepted) {
  PackedWeight p;
  EXPECT_TRUE(pack(good_weight(), DType::kBF16, &p).ok());
  PackedGeometry g;
  ASSERT_TRUE(PackedGeometry::make(100, 200, 4, 64, &g).ok());
  EXPECT_TRUE(validate(g).ok());
}

// dequantize_reference reads codes, scales and g_idx at the indices the shape implies: a weight
// validate() refuses gives an empty result instead of reads past its arrays.
TEST(BadInput, DequantizeReferenceOfAMalformedWeightIsEmpty) {
  const QuantizedWeight good = good_weight();
  ASSERT_EQ(dequantize_reference(good).size(), static_cast<size_t>(good.n * good.k));
  QuantizedWeight short_codes = good;
  short_codes.codes.resize(short_codes.codes.size() / 2);
  EXPECT_TRUE(dequantize_reference(short_codes).empty());
  QuantizedWeight short_scales = good;
  short_scales.scales.pop_back();
  EXPECT_TRUE(dequantize_reference(short_scales).empty());
  QuantizedWeight bad_group = good;
  bad_group.g_idx.assign(static_cast<size_t>(good.k), 0);
  bad_group.g_idx[3] = 1000;
  EXPECT_TRUE(dequantize_reference(bad_group).empty());
}

}  // namespace
}  // namespace sailfish
