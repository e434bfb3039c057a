// Shared helpers for the CPU tests: seeded random weights in every format.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "sailfish/quantized_weight.h"

namespace sailfish::testing {

// A fresh seed per process (printed by the first caller) so every run draws new data; set
// SAILFISH_TEST_SEED to replay a failure.
uint64_t test_seed();

struct RandomWeightSpec {
  int64_t n = 64, k = 64;
  int bits = 4;
  int group_size = 128;
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  bool act_order = false;
  DType scale_dtype = DType::kBF16;  // scales are drawn exactly representable in this type
};

// Random codes, positive and negative scales (exact in spec.scale_dtype), zero points, and a
// balanced random g_idx when act_order is set. Always passes validate().
QuantizedWeight random_weight(std::mt19937_64& rng, const RandomWeightSpec& spec);

std::vector<double> random_doubles(std::mt19937_64& rng, size_t count, double lo = -1.0,
                                   double hi = 1.0);

}  // namespace sailfish::testing
