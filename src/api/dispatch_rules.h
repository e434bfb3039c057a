// The auto tier's decode/prefill crossover, measured on the H200 (int4 and int8, group 128, bf16,
// Llama-3 shapes, M = 4-64; docs/perf/decode.md, "Crossover v2" and v12a). Host only and
// free of device state, so the CPU tests pin it.
#pragma once

#include <cstdint>

namespace sailfish::api {

// The smallest M the auto tier sends to the prefill tier (where it can run) when the
// prefill_min_m option is unset:
//   int4  33: since v12a (three stages a warp at 17-32 tokens, docs/perf/decode.md) the decode
//             tier beat the prefill tier's 32-token tiles at M = 24 and 32 on all eight Llama-3
//             shapes (by 2-31%; M = 17-23 and 25-31 run the same kernels as 24 and 32). Before,
//             prefill had won at M = 17-32 on the six shapes under 2^27 elements;
//   int8  12: the int8 decode tier has no offset form beyond one token tile; the prefill tier
//             won on seven of eight shapes at M = 12 (the eighth, 70b.gate_up, level) and at 16
//             (70b.gate_up within 1.4%), on all eight at 32 (1.5-2.2x); decode won on six of
//             eight at M = 8.
constexpr int64_t default_prefill_min_m(int bits) { return bits == 8 ? 12 : 33; }

}  // namespace sailfish::api
