// Random problems for the planners' property tests (decode_plan_invariants_test.cpp,
// prefill_plan_invariants_test.cpp): shapes, formats and activation types as plan() may be asked
// for them. The seed is testing::test_seed()'s (printed; SAILFISH_TEST_SEED replays it).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>

#include "sailfish/sailfish.h"

namespace sailfish::testing {

inline int64_t uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

template <typename T>
T pick(std::mt19937_64& rng, std::initializer_list<T> values) {
  return *(values.begin() + uniform(rng, 0, static_cast<int64_t>(values.size()) - 1));
}

// A forced setting one time in three, else unset (the planner's own choice).
template <typename T>
std::optional<T> maybe(std::mt19937_64& rng, T value) {
  return uniform(rng, 0, 2) == 0 ? std::optional<T>(value) : std::nullopt;
}

// A weight dimension: small and ragged, a multiple of 64 as models have, or large and ragged.
inline int64_t random_dimension(std::mt19937_64& rng) {
  switch (uniform(rng, 0, 2)) {
    case 0: return uniform(rng, 1, 300);
    case 1: return 64 * uniform(rng, 1, 900);
    default: return uniform(rng, 300, 60000);
  }
}

// A problem of random shape, bit width, group size, zero-point kind, activation type and
// act-order, with m left for the caller. False where PackedGeometry::make refuses the draw (a
// weight pack() refuses never reaches a planner).
inline bool random_problem(std::mt19937_64& rng, Problem* p) {
  const int group = pick(rng, {16, 32, 64, 128, 128, 256, kChannelwise});
  const int bits = pick(rng, {4, 4, 8});
  if (!PackedGeometry::make(random_dimension(rng), random_dimension(rng), bits, group,
                            &p->geometry)
           .ok()) {
    return false;
  }
  p->act_dtype = p->scale_dtype = pick(rng, {DType::kBF16, DType::kF16});
  p->zero_kind = pick(rng, {ZeroPointKind::kNone, ZeroPointKind::kNone, ZeroPointKind::kInteger,
                            ZeroPointKind::kFloat});
  p->act_order = group != kChannelwise && uniform(rng, 0, 5) == 0;
  p->has_bias = uniform(rng, 0, 1) == 1;
  return true;
}

// M for a tier whose own range is 1 .. usual: mostly in it, one time in five usual + 1 .. beyond
// (the tier forced), and one time in sixteen one of `edges` (the limits the tier must keep).
inline int64_t random_m(std::mt19937_64& rng, int64_t usual, int64_t beyond,
                        std::initializer_list<int64_t> edges) {
  switch (uniform(rng, 0, 15)) {
    case 0: return pick(rng, edges);
    case 1: case 2: case 3: return uniform(rng, usual + 1, beyond);
    default: return uniform(rng, 1, usual);
  }
}

// "n N, k K, m M, intB, group G" for a failure message.
inline std::string problem_name(const Problem& p) {
  return "n " + std::to_string(p.geometry.n) + ", k " + std::to_string(p.geometry.k) + ", m " +
         std::to_string(p.m) + ", int" + std::to_string(p.geometry.bits) + ", group " +
         std::to_string(p.geometry.group_size);
}

}  // namespace sailfish::testing
