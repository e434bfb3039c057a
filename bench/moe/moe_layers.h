// Public MoE models' expert shapes, for sailfish_moe_bench and the MoE plan tests: gate_up is
// [2 * intermediate] x hidden per expert, down hidden x intermediate.
#pragma once

#include <cstdint>

namespace sailfish::bench {

struct MoeLayer {
  const char* name;
  int experts, top_k;
  int64_t hidden, intermediate;
};

inline constexpr MoeLayer kMoeLayers[] = {
    {"qwen3-30b-a3b", 128, 8, 2048, 768}, {"mixtral-8x7b", 8, 2, 4096, 14336},
    {"deepseek-v3", 256, 8, 7168, 2048},  {"gpt-oss-120b", 128, 4, 2880, 2880},
    {"qwen1.5-moe", 60, 4, 2048, 1408},
};

}  // namespace sailfish::bench
