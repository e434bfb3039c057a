#include "test_helpers.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sailfish/quantize.h"

namespace sailfish::testing {

uint64_t test_seed() {
  static const uint64_t seed = [] {
    uint64_t s = std::random_device{}();
    s = (s << 32) ^ std::random_device{}();
    if (const char* env = std::getenv("SAILFISH_TEST_SEED")) s = std::stoull(env);
    std::printf("[sailfish] test seed %llu (set SAILFISH_TEST_SEED to replay)\n",
                static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

QuantizedWeight random_weight(std::mt19937_64& rng, const RandomWeightSpec& spec) {
  QuantizedWeight w;
  w.n = spec.n;
  w.k = spec.k;
  w.bits = spec.bits;
  w.group_size = spec.group_size;
  const int max_code = (1 << spec.bits) - 1;
  std::uniform_int_distribution<int> code(0, max_code);
  w.codes.resize(static_cast<size_t>(w.n * w.k));
  for (auto& c : w.codes) c = static_cast<uint8_t>(code(rng));
  const size_t gn = static_cast<size_t>(w.num_groups() * w.n);
  std::uniform_real_distribution<float> mag(0.001f, 0.05f);
  std::bernoulli_distribution negative(0.1);
  w.scales.resize(gn);
  for (auto& s : w.scales) {
    s = round_to_dtype(mag(rng) * (negative(rng) ? -1.0f : 1.0f), spec.scale_dtype);
  }
  w.zero_kind = spec.zero_kind;
  if (spec.zero_kind == ZeroPointKind::kInteger) {
    w.zero_codes.resize(gn);
    for (auto& z : w.zero_codes) z = static_cast<uint8_t>(code(rng));
  } else if (spec.zero_kind == ZeroPointKind::kFloat) {
    std::uniform_real_distribution<float> zv(0.0f, static_cast<float>(max_code));
    w.zero_values.resize(gn);
    // Fractional zero points, exactly representable in the scale type.
    for (auto& z : w.zero_values) z = round_to_dtype(zv(rng), spec.scale_dtype);
  }
  if (spec.act_order && spec.group_size != kChannelwise) {
    w.g_idx.resize(static_cast<size_t>(w.k));
    for (int64_t kk = 0; kk < w.k; ++kk) w.g_idx[kk] = static_cast<int32_t>(kk / spec.group_size);
    std::shuffle(w.g_idx.begin(), w.g_idx.end(), rng);
  }
  return w;
}

std::vector<double> random_doubles(std::mt19937_64& rng, size_t count, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> out(count);
  for (auto& v : out) v = dist(rng);
  return out;
}

MoeRouting random_routing(std::mt19937_64& rng, int64_t tokens, int top_k, int experts,
                          bool expert_parallel) {
  MoeRouting r;
  r.tokens = tokens;
  r.top_k = top_k;
  r.experts = experts;
  const int hot = std::uniform_int_distribution<int>(1, experts)(rng);
  for (int64_t i = 0; i < r.choices(); ++i) {
    const int range = std::bernoulli_distribution(0.7)(rng) ? hot : experts;
    r.topk_ids.push_back(std::uniform_int_distribution<int>(0, range - 1)(rng));
  }
  r.topk_weights.assign(r.topk_ids.size(), 1.0f);
  if (expert_parallel) {
    std::vector<int32_t> order(static_cast<size_t>(experts));
    for (int e = 0; e < experts; ++e) order[static_cast<size_t>(e)] = e;
    std::shuffle(order.begin(), order.end(), rng);
    const int local = std::uniform_int_distribution<int>(1, experts)(rng);
    r.expert_map.assign(static_cast<size_t>(experts), -1);
    for (int l = 0; l < local; ++l) r.expert_map[static_cast<size_t>(order[l])] = l;
  }
  return r;
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) previous_ = old;
  setenv(name, value, 1);
}

ScopedEnv::~ScopedEnv() {
  if (previous_.has_value()) {
    setenv(name_.c_str(), previous_->c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

}  // namespace sailfish::testing
