// Small integer helpers the tiers' host code shares (plan-time sizes and launch shapes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "sailfish/packed_format.h"
#include "sailfish/types.h"

namespace sailfish::detail {

inline size_t align_up(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// The smallest shift with (1 << shift) >= value: log2 of a power of two (a group size).
inline int log2_ceil(int64_t value) {
  int shift = 0;
  while ((int64_t(1) << shift) < value) ++shift;
  return shift;
}

// The kernels' group shift: log2 of a group's packed columns, or 30 for channelwise weights (every
// column then falls in group 0).
inline int group_shift(const PackedGeometry& g) {
  return g.group_size == kChannelwise ? 30 : log2_ceil(g.group_rows);
}

// Grid of a grid-stride support kernel (prep, reduce) with 256-thread blocks over `elements`:
// one block per 256 elements, at most 8 per SM, at least 1.
inline int support_grid(int64_t elements, int sm_count) {
  const int64_t blocks = (elements + 255) / 256;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(blocks, int64_t(sm_count) * 8)));
}

}  // namespace sailfish::detail
