// The canonical weight: group lookup, zero points, validate() on good data of every kind.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sailfish
