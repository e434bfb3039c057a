// Shared helpers for the CPU tests: seeded random weights in every format.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sailfish/moe.h"
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

// A MoE routing as routers skew it: 70% of the picks among a random number of hot experts (ids
// may repeat within a token), weights 1. With expert_parallel, this rank holds a random subset of
// the experts in a random local order.
MoeRouting random_routing(std::mt19937_64& rng, int64_t tokens, int top_k, int experts,
                          bool expert_parallel);

// Sets an environment variable for one scope, then puts back what was there (unset, or the value
// the process was started with: a device run may set SAILFISH_* for the whole suite).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> previous_;
};

}  // namespace sailfish::testing
