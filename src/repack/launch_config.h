// Launch shape shared by the repack kernels: one thread per output item, 256 threads per block.
// Blocks are whole warps, so every kernel may reduce its error bits with a full-warp vote before
// one atomic per warp (the flag word would otherwise take one atomic per bad element).
#pragma once

#include <cstdint>

namespace sailfish::repack {

constexpr int kThreadsPerBlock = 256;

// Blocks for `items` threads. Every caller's item count is below 2^31 (PackedGeometry::make keeps
// the packed codes under 2^31 words, and metadata is smaller still), so this fits a grid's x.
inline unsigned int blocks_for(int64_t items) {
  return static_cast<unsigned int>((items + kThreadsPerBlock - 1) / kThreadsPerBlock);
}

}  // namespace sailfish::repack
