// Bytes, flops and roofline time of one row (DESIGN.md "How figures are taken"):
//   roofline = max(bytes / streaming-read bandwidth, flops / peak dense TFLOP/s)
//   bytes    = packed codes + scales (+ zero folds) + 2 M K (activations) + 2 M N (output)
//              (+ 2 N bias, + 4 K act-order permutation when present)
//   flops    = 2 M N K
// The same byte count is the numerator of every TB/s the bench prints (Sailfish, cuBLAS and floor
// alike), so TB/s columns compare times of the same problem, not bytes each code path happened
// to move.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sailfish/packed_format.h"

namespace sailfish::bench {

struct RowCost {
  // codes + scales (+ zero shifts and folds); padding included: it is streamed
  double weight_bytes = 0.0;
  double bytes = 0.0;         // everything above
  double flops = 0.0;
};

inline RowCost row_cost(const PackedGeometry& g, bool zero_points, bool act_order, bool bias,
                        int64_t m) {
  RowCost c;
  const double meta = static_cast<double>(g.scale_rows * g.n_pad) * 2.0;
  c.weight_bytes = static_cast<double>(g.code_bytes()) + meta * (zero_points ? 3.0 : 1.0);
  const double md = static_cast<double>(m), nd = static_cast<double>(g.n),
               kd = static_cast<double>(g.k);
  c.bytes = c.weight_bytes + 2.0 * md * kd + 2.0 * md * nd + (bias ? 2.0 * nd : 0.0) +
            (act_order ? 4.0 * kd : 0.0);
  c.flops = 2.0 * md * nd * kd;
  return c;
}

// Seconds; bandwidth in 1e12 B/s, peak in 1e12 flop/s.
inline double roofline_seconds(const RowCost& c, double read_tbps, double peak_tflops) {
  return std::max(c.bytes / (read_tbps * 1e12), c.flops / (peak_tflops * 1e12));
}

}  // namespace sailfish::bench
