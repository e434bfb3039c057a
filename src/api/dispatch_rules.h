// The auto tier's decode/prefill crossover, measured on the H200 (int4 and int8, group 128, bf16,
// Llama-3 shapes, M = 4-64; docs/perf/decode.md, "Crossover v2", v12a and v33b). Host only and
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
//   int8  17: through 16 tokens (two token tiles) the decode tier of v33 beat the prefill tier's
//             16-token tiles on seven of eight Llama-3 shapes at M = 12 and 16 (0.86-0.99x its
//             time; l3-70b.qkv the exception at 1.09-1.10x), and tuning chose decode there too.
//             At 20-32 (three and four tiles, per-pair scales) neither wins across the shapes
//             (0.89-1.21x, mostly within 5%), so prefill keeps them. The edge was 12 from
//             Crossover v2, measured before the int8 decode kernels' deeper pipelines and
//             cluster epilogue (v13-v30), when prefill won on seven of eight at 12 and 16.
constexpr int64_t default_prefill_min_m(int bits) { return bits == 8 ? 17 : 33; }

}  // namespace sailfish::api
