// Stream-K fixup of the prefill tier (stream_k.h): every tile that two or more CTAs' runs share
// gets Y = the sum of its pieces' fp32 partials, in CTA order, + bias; one rounding to 16 bits,
// the same bits every run. Tiles a single CTA covered were stored by it and are not visited.
#pragma once

#include <cstdint>

#include "common/ptx/griddepcontrol.cuh"
#include "prefill/ordered_sum.cuh"
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
// (stream_k_boundary_tile). Thread 0 works out the CTA's tile and owners (64-bit divisions), once
// for the CTA. Two earlier forms were slow on the H200 (perf/prefill.md, v16): one CTA a shared
// tile whose threads walked its elements, loading the pieces one after another (the Stream-K
// calls ran 10-24 us over their main kernel's estimate), then this grid with every thread doing
// the divisions (11.4 us for l3-70b.gate_up at M = 64, 6.8 us for l3-8b.o with its slots in L2).
template <typename T>
__global__ void __launch_bounds__(kFixupThreads) stream_k_fixup_kernel(const FixupParams p) {
  // The tile (-1: nothing to do), its first and last owner, the first owner's slot, and the
  // tile's first token and column.
  __shared__ int tile_info[6];
  // Plan arithmetic only, so it runs before the wait, under the main kernel's tail with PDL.
  if (threadIdx.x == 0) {
    const int64_t total = int64_t(p.n_tiles) * p.m_tiles * p.k_blocks;
    const int tile = stream_k_boundary_tile(blockIdx.x + 1, total, p.grid, p.k_blocks);
    tile_info[0] = tile;
    if (tile >= 0) {
      // The first owner's piece is its run's first or last; every later owner's run starts
      // inside this tile, so its piece is its first (slot 2c).
      const int64_t first = int64_t(tile) * p.k_blocks;
      const UnitCoord u = unit_coord(tile, p.n_tiles, p.m_tiles);
      tile_info[1] = stream_k_owner(first, total, p.grid);
      tile_info[2] = stream_k_owner(first + p.k_blocks - 1, total, p.grid);
      tile_info[3] = stream_k_slot(tile_info[1], tile, p.k_blocks, total, p.grid);
      tile_info[4] = u.m_tile * p.tokens;
      tile_info[5] = u.n_tile * 128;
    }
  }
  __syncthreads();
  // The next grid is let in before the wait, as in reduce_kernel.cuh (l3-70b.gate_up's Stream-K
  // plans ran 0.997-1.004x so on an H100, docs/perf/prefill.md, stop 62).
  gpu::allow_next_grid();
  gpu::wait_for_previous_grid();
  if (tile_info[0] < 0) return;
  const int owner_first = tile_info[1], owner_last = tile_info[2];
  const int64_t floats = stream_k_slot_floats(p.tokens);
  const int e = 4 * (blockIdx.y * kFixupThreads + threadIdx.x);
  const int token = tile_info[4] + e / 128;
  const int col = tile_info[5] + e % 128;
  if (token >= p.m || col >= p.n) return;
  // Piece 0 is the first owner's (its slot worked out above); piece j > 0 is owner
  // owner_first + j's first slot. Added in CTA order (ordered_sum), four loads at a time.
  const float* partial = p.partials + e;
  const int64_t first_slot = tile_info[3];
  const float4 sum = ordered_sum<4>(owner_last - owner_first + 1, [&](int j) {
    const int64_t slot = j == 0 ? first_slot : 2 * int64_t(owner_first + j);
    return reinterpret_cast<const float4*>(partial + slot * floats);
  });
  store_four_columns(static_cast<T*>(p.y) + int64_t(token) * p.n + col, sum, col, p.n,
                     static_cast<const T*>(p.bias));
}

}  // namespace sailfish::prefill
