// The auto tier's decode/prefill crossover (src/api/dispatch_rules.h) on the shapes it was
// measured on: the rule must reproduce the measured winner's side of the edge for each class.
#include <gtest/gtest.h>

#include "api/dispatch_rules.h"

namespace sailfish::api {
namespace {

struct Shape {
  const char* name;
  int64_t k, n;
};

constexpr Shape kSmall[] = {{"l3-8b.qkv", 4096, 6144},   {"l3-8b.o", 4096, 4096},
                            {"l3-8b.gate_up", 4096, 28672}, {"l3-8b.down", 14336, 4096},
                            {"l3-70b.qkv", 8192, 10240}, {"l3-70b.o", 8192, 8192}};
constexpr Shape kLarge[] = {{"l3-70b.gate_up", 8192, 57344}, {"l3-70b.down", 28672, 8192}};

TEST(DispatchRules, Int4SmallWeightsGoToPrefillFrom17) {
  for (const Shape& s : kSmall) {
    EXPECT_LT(s.n * s.k, kLargeWeightElements) << s.name;
    EXPECT_EQ(default_prefill_min_m(4, s.n, s.k), 17) << s.name;
  }
}

TEST(DispatchRules, Int4LargeWeightsStayOnDecodeThrough32) {
  for (const Shape& s : kLarge) {
    EXPECT_GE(s.n * s.k, kLargeWeightElements) << s.name;
    EXPECT_EQ(default_prefill_min_m(4, s.n, s.k), 33) << s.name;
  }
  // The edge itself.
  EXPECT_EQ(default_prefill_min_m(4, kLargeWeightElements, 1), 33);
  EXPECT_EQ(default_prefill_min_m(4, kLargeWeightElements - 1, 1), 17);
}

TEST(DispatchRules, Int8GoesToPrefillFrom12) {
  for (const Shape& s : kSmall) EXPECT_EQ(default_prefill_min_m(8, s.n, s.k), 12) << s.name;
  for (const Shape& s : kLarge) EXPECT_EQ(default_prefill_min_m(8, s.n, s.k), 12) << s.name;
}

}  // namespace
}  // namespace sailfish::api
