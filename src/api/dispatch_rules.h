// The auto tier's decode/prefill crossover by shape class, measured on the H200 (int4 and int8,
// group 128, bf16, Llama-3 shapes, M = 4-64; docs/perf/decode.md, "Crossover v2"). Host only and
// free of device state, so the CPU tests pin it.
#pragma once

#include <cstdint>

namespace sailfish::api {

// Weights with at least this many elements (K x N) count as large.
constexpr int64_t kLargeWeightElements = int64_t(1) << 27;

// The smallest M the auto tier sends to the prefill tier (where it can run) when the
// prefill_min_m option is unset:
//   int4, K x N < 2^27   17: at M = 17-32 the prefill tier's 32-token tiles beat the decode tier
//                           on all six such Llama-3 shapes (1.02-1.96x); at M = 16 prefill won
//                           on three of them (by 6-10%) and lost on three (by 8-18%);
//   int4, K x N >= 2^27  33: on 70b.down (2.3e8) and 70b.gate_up (4.7e8) decode won at M = 17-24
//                           (by 6-33%) and on gate_up at 28 and 32 (by 10% and 8%);
//   int8                 12: the int8 decode tier has no offset form beyond one token tile; the
//                           prefill tier won on seven of eight shapes at M = 12 (the eighth,
//                           70b.gate_up, level) and at 16 (70b.gate_up within 1.4%), on all
//                           eight at 32 (1.5-2.2x); decode won on six of eight at M = 8.
constexpr int64_t default_prefill_min_m(int bits, int64_t n, int64_t k) {
  if (bits == 8) return 12;
  return n * k >= kLargeWeightElements ? 33 : 17;
}

}  // namespace sailfish::api
