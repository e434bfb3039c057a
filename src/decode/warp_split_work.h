// Which blocks a warp of the warp-split kernel streams: its first strip, first k-block and block
// count. Usable on host and device, so the CPU tests check that the warps of a grid cover every
// (strip, k-block) exactly once (tests/cpu/decode_warp_split_work_test.cpp).
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "decode/stream_k_grid.h"
#include "decode/tile_shapes.h"

namespace sailfish::decode {

struct WarpSplitWork {
  int first_strip;  // the strip of the warp's first block
  int kb_begin;     // that block's k-block within its strip
  int num_blocks;   // blocks the warp streams, in order (Stream-K runs may cross into next strips)
};

// Split grid: CTA (strip, split) takes split `split` of the strip's k_blocks (split_begin), and
// its warp `warp` the warp's 1 / kWarpCount of that range, contiguous (the first seed's "warps
// split K contiguously").
template <int kWarpCount>
SF_HOST_DEVICE inline WarpSplitWork warp_split_work(int k_blocks, int splits, int strip, int split,
                                                    int warp) {
  const int cta_begin = static_cast<int>(split_begin(k_blocks, splits, split));
  const int cta_end = static_cast<int>(split_begin(k_blocks, splits, split + 1));
  const int kb_begin = cta_begin + (cta_end - cta_begin) * warp / kWarpCount;
  return {strip, kb_begin, cta_begin + (cta_end - cta_begin) * (warp + 1) / kWarpCount - kb_begin};
}

// Stream-K grid (stream_k_grid.h): cluster `cluster` of `splits` CTAs owns stream_k_strips strips
// of the n_pad / 64, and warp `warp` of rank `split` walks run split * kWarpCount + warp of their
// flat (strip, k-block) units. 32-bit arithmetic: stream_k_plan keeps units * runs below 2^31.
template <int kWarpCount>
SF_HOST_DEVICE inline WarpSplitWork warp_split_stream_k_work(int k_blocks, int splits,
                                                             int n_pad, int stream_k_strips,
                                                             uint32_t cluster, int split,
                                                             int warp) {
  const uint32_t runs = splits * kWarpCount, run = split * kWarpCount + warp;
  const uint32_t units = stream_k_cluster_strips(n_pad / 64, stream_k_strips, cluster) * k_blocks;
  const uint32_t run_begin = stream_k_run_begin(units, runs, run);
  const uint32_t strip_in_cluster = run_begin / k_blocks;
  return {static_cast<int>(cluster * stream_k_strips + strip_in_cluster),
          static_cast<int>(run_begin - strip_in_cluster * k_blocks),
          static_cast<int>(stream_k_run_begin(units, runs, run + 1) - run_begin)};
}

}  // namespace sailfish::decode
