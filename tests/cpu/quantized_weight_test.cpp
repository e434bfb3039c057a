// The canonical weight: group lookup, zero points, validate() on good data of every kind.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <utility>

#include "sailfish/quantized_weight.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

TEST(QuantizedWeight, GroupsAndDefaults) {
  QuantizedWeight w;
  w.n = 3;
  w.k = 300;
  w.group_size = 128;
  EXPECT_EQ(w.num_groups(), 3);
  EXPECT_EQ(w.group_of(255), 1);
  EXPECT_EQ(w.group_of(299), 2);
  w.group_size = kChannelwise;
  EXPECT_EQ(w.num_groups(), 1);
  EXPECT_EQ(w.group_of(299), 0);
  w.bits = 8;
  EXPECT_EQ(w.zero_point(0, 0), 128);
}

// The group count every importer and packer sizes planes by (types.h): the last group partial,
// channelwise one group, and no overflow where k is near INT64_MAX (k + group_size - 1 would wrap).
TEST(QuantizedWeight, GroupCountRoundsUpWithoutOverflow) {
  EXPECT_EQ(group_count(300, 128), 3);
  EXPECT_EQ(group_count(256, 128), 2);
  EXPECT_EQ(group_count(1, 32), 1);
  EXPECT_EQ(group_count(0, 32), 0);
  EXPECT_EQ(group_count(300, kChannelwise), 1);
  const int64_t huge = INT64_MAX - 7;
  EXPECT_EQ(group_count(huge, 16), huge / 16 + 1);
  EXPECT_EQ(group_count(huge, 256), huge / 256 + 1);
}

TEST(QuantizedWeight, RandomWeightsOfEveryKindValidate) {
  std::mt19937_64 rng(testing::test_seed() + 41);
  for (int bits : {4, 8}) {
    for (int gs : {16, 32, 64, 128, 256, -1}) {
      for (auto zk : {ZeroPointKind::kNone, ZeroPointKind::kInteger, ZeroPointKind::kFloat}) {
        for (bool act_order : {false, true}) {
          testing::RandomWeightSpec spec;
          spec.n = 17;
          spec.k = 333;
          spec.bits = bits;
          spec.group_size = gs;
          spec.zero_kind = zk;
          spec.act_order = act_order;
          const Status st = validate(testing::random_weight(rng, spec));
          EXPECT_TRUE(st.ok()) << st.to_string();
        }
      }
    }
  }
}

// Every round trip in the suite (pack/unpack, the importers, serialize) compares weights with
// operator==: it must tell apart two weights that differ in any one field, or those round trips
// would pass whatever came back.
TEST(QuantizedWeight, EqualityNoticesEveryField) {
  std::mt19937_64 rng(testing::test_seed() + 42);
  testing::RandomWeightSpec spec;
  spec.n = 16;
  spec.k = 64;
  spec.group_size = 32;
  spec.act_order = true;
  spec.zero_kind = ZeroPointKind::kFloat;
  const QuantizedWeight with_values = testing::random_weight(rng, spec);
  spec.zero_kind = ZeroPointKind::kInteger;
  const QuantizedWeight with_codes = testing::random_weight(rng, spec);
  ASSERT_TRUE(with_values == with_values);
  ASSERT_TRUE(with_codes == QuantizedWeight(with_codes));

  struct Change {
    const char* field;
    const QuantizedWeight* base;
    std::function<void(QuantizedWeight&)> apply;
  };
  const Change changes[] = {
      {"n", &with_codes, [](QuantizedWeight& w) { w.n += 1; }},
      {"k", &with_codes, [](QuantizedWeight& w) { w.k += 1; }},
      {"bits", &with_codes, [](QuantizedWeight& w) { w.bits = 8; }},
      {"group_size", &with_codes, [](QuantizedWeight& w) { w.group_size = 64; }},
      {"codes", &with_codes, [](QuantizedWeight& w) { w.codes[37] ^= 1; }},
      {"scales", &with_codes, [](QuantizedWeight& w) { w.scales[5] = -w.scales[5]; }},
      {"zero_kind", &with_codes, [](QuantizedWeight& w) { w.zero_kind = ZeroPointKind::kNone; }},
      {"zero_codes", &with_codes, [](QuantizedWeight& w) { w.zero_codes[3] ^= 1; }},
      {"zero_values", &with_values, [](QuantizedWeight& w) { w.zero_values[3] += 0.5f; }},
      {"g_idx", &with_codes,
       [](QuantizedWeight& w) {  // two rows of different groups trade places
         size_t other = 1;
         while (w.g_idx[other] == w.g_idx[0]) ++other;
         std::swap(w.g_idx[0], w.g_idx[other]);
       }},
      {"g_idx dropped", &with_codes, [](QuantizedWeight& w) { w.g_idx.clear(); }},
  };
  for (const Change& c : changes) {
    QuantizedWeight changed = *c.base;
    c.apply(changed);
    EXPECT_FALSE(changed == *c.base) << c.field << " differs, yet the weights compare equal";
    EXPECT_FALSE(*c.base == changed) << c.field << " differs, yet the weights compare equal";
  }
}

}  // namespace
}  // namespace sailfish
