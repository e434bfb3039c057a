// The two planes of a device weight's zero_fold (PackedWeight::zero_fold, docs/FORMAT.md): the
// kernels take them as two pointers, shifts (u16 integers) and folds (scale_dtype).
#pragma once

#include <cstdint>

#include "sailfish/sailfish.h"

namespace sailfish::detail {

struct ZeroPlanes {
  const uint16_t* shifts = nullptr;
  const void* folds = nullptr;
};

// Both null for a weight without zero points.
inline ZeroPlanes zero_planes(const DeviceWeight& w) {
  if (w.zero_fold == nullptr) return {};
  const auto* shifts = static_cast<const uint16_t*>(w.zero_fold);
  return {shifts, shifts + w.geometry.scale_rows * w.geometry.n_pad};
}

}  // namespace sailfish::detail
