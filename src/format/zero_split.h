// How the packed format stores a zero point (docs/FORMAT.md, "Scales and zero points"), shared by
// the CPU packer (packed_format.cpp) and the GPU repack kernels (repack/pack_element.h) so the two
// produce the same bits.
//
// W = (q - zp) * s is dequantized as (q - shift) * s + fold: `shift` is the integer nearest zp,
// clamped to the code range (stored as an unsigned 16-bit integer), so q - shift is an exact
// small integer in fp16 and bf16; `fold` is what the integer misses, (shift - zp) * s. Integer
// zero points give fold = 0 and an exact (q - zp) * s before the one rounding of the fused
// multiply-add, as a plain implementation computes it. A fractional zero point leaves
// |fold| <= |s| / 2, so the fold's own rounding (the only error it adds, and the same for every
// weight of the group and column) stays below a quarter ulp of |s|. Format version 1 stored
// (B - zp) * s alone: its rounding, up to half an ulp of 2^(bits-1) |s|, added coherently over
// a group and broke the accuracy bound on 8-bit float zero points (docs/perf/decode.md, v14).
#pragma once

#include <cmath>

#include "common/host_device.h"

namespace sailfish::format {

struct ZeroSplit {
  double shift;  // an integer in [0, 2^bits - 1]
  double fold;   // (shift - zp) * scale, exact in double; the packer rounds it to float, then to
                 // the scale type
};

// zp: the zero point (finite); scale: the scale already rounded to the packed type.
SF_HOST_DEVICE inline ZeroSplit split_zero_point(double zp, double scale, int bits) {
  const double max_code = static_cast<double>((1 << bits) - 1);
  const double nearest = floor(zp + 0.5);
  const double shift = nearest < 0.0 ? 0.0 : (nearest > max_code ? max_code : nearest);
  return {shift, (shift - zp) * scale};
}

}  // namespace sailfish::format
