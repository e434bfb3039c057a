// Stream-K fixup of the prefill tier (stream_k.h): every tile that two or more CTAs' runs share
// gets Y = the sum of its pieces' fp32 partials, in CTA order, + bias; one rounding to 16 bits,
// the same bits every run. Tiles a single CTA covered were stored by it and are not visited.
#pragma once

#include <cstdint>

#include "common/ptx/griddepcontrol.cuh"
#include "prefill/stream_k.h"

namespace sailfish::prefill {

struct FixupParams {
  const float* partials;  // [slot][tokens][128]
  int32_t n_tiles, m_tiles, k_blocks;
  int32_t grid;           // the main kernel's CTAs; at most tiles x k_blocks, so no run is empty
  int32_t tokens;         // tile width
  int32_t m, n;
  const void* bias;       // [n] or null
  void* y;                // [m][n]
};

// Threads a fixup CTA has, each summing four adjacent columns of one token.
constexpr int kFixupThreads = 256;
// CTAs a shared tile gets: its tokens x 128 floats, four a thread.
SF_HOST_DEVICE constexpr int fixup_chunks(int tokens) { return tokens * 128 / 4 / kFixupThreads; }

// Grid (grid - 1, fixup_chunks(tokens)), launched only when grid > 1: blockIdx.x + 1 names a
// boundary between two CTAs' runs, and the CTAs of the first boundary inside a shared tile sum it
// (stream_k_boundary_tile). A first version gave each shared tile one CTA whose threads walked
// its elements, loading the pieces one after another: latency-bound, the Stream-K calls ran
// 10-24 us over their main kernel's estimate on the H200 (perf/prefill.md, v16).
template <typename T>
__global__ void __launch_bounds__(kFixupThreads) stream_k_fixup_kernel(const FixupParams p) {
  gpu::wait_for_previous_grid();
  gpu::allow_next_grid();
  const int64_t total = int64_t(p.n_tiles) * p.m_tiles * p.k_blocks;
  const int tile = stream_k_boundary_tile(blockIdx.x + 1, total, p.grid, p.k_blocks);
  if (tile < 0) return;
  const int64_t first = int64_t(tile) * p.k_blocks;
  const int owner_first = stream_k_owner(first, total, p.grid);
  const int owner_last = stream_k_owner(first + p.k_blocks - 1, total, p.grid);
  const int64_t floats = stream_k_slot_floats(p.tokens);
  const int e = 4 * (blockIdx.y * kFixupThreads + threadIdx.x);
  const UnitCoord u = unit_coord(tile, p.n_tiles, p.m_tiles);
  const int token = u.m_tile * p.tokens + e / 128;
  const int col = u.n_tile * 128 + e % 128;
  if (token >= p.m || col >= p.n) return;
  // The first owner's piece is its run's first or last; every later owner's run starts inside
  // this tile, so its piece is its first (slot 2c): stream_k_slot, worked out once. Loads go out
  // four at a time and are added in CTA order.
  const float* partial = p.partials + e;
  float4 sum = *reinterpret_cast<const float4*>(
      partial + stream_k_slot(owner_first, tile, p.k_blocks, total, p.grid) * floats);
  int c = owner_first + 1;
  for (; c + 3 <= owner_last; c += 4) {
    float4 v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v[i] = *reinterpret_cast<const float4*>(partial + 2 * (c + i) * floats);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      sum.x += v[i].x;
      sum.y += v[i].y;
      sum.z += v[i].z;
      sum.w += v[i].w;
    }
  }
  for (; c <= owner_last; ++c) {
    const float4 v = *reinterpret_cast<const float4*>(partial + 2 * c * floats);
    sum.x += v.x;
    sum.y += v.y;
    sum.z += v.z;
    sum.w += v.w;
  }
  const float values[4] = {sum.x, sum.y, sum.z, sum.w};
  const T* bias = static_cast<const T*>(p.bias);
  T* out = static_cast<T*>(p.y) + int64_t(token) * p.n + col;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (col + i >= p.n) break;
    out[i] = static_cast<T>(bias != nullptr ? values[i] + static_cast<float>(bias[col + i])
                                            : values[i]);
  }
}

}  // namespace sailfish::prefill
