// Split-K reduce of the prefill tier: Y[m][n] = sum over splits, in split order, of the fp32
// partials [split][m_pad][n_pad] + bias; one rounding to 16 bits, the same bits every run.
// Token-major like Y, so consecutive threads read consecutive columns.
#pragma once

#include <cstdint>

#include "common/ptx/griddepcontrol.cuh"
#include "prefill/ordered_sum.cuh"

namespace sailfish::prefill {

struct ReduceParams {
  const float* partials;  // [splits][m_pad][n_pad]
  int32_t splits, m_pad, n_pad, m, n;
  const void* bias;       // [n] or null
  void* y;                // [m][n]
};

constexpr int kReduceThreads = 256;

// Grid (column quads, tokens), both grid-strided: each thread sums four adjacent columns of one
// token with one 16-byte load a split (n_pad is a multiple of 64), up to eight splits' loads in
// flight at a time, added in split order (ordered_sum). The first version took one element a
// thread through a 64-bit division: 10 us for l3-70b.qkv at M = 128, 3 splits, its partials in
// L2 (perf/prefill.md, v16).
template <typename T>
__global__ void __launch_bounds__(kReduceThreads) reduce_kernel(const ReduceParams p) {
  const int64_t split_stride = int64_t(p.m_pad) * p.n_pad;
  const int quads = (p.n + 3) / 4;
  const T* bias = static_cast<const T*>(p.bias);
  // The next grid is let in before this one waits for the main grid: its CTAs take the room the
  // main grid's leave and start their prologues (the prefill producer's first weight copies) while
  // this kernel still runs. After the wait, as before, it was let in only once the main grid had
  // ended. H100, five interleaved rounds (docs/perf/prefill.md, stop 62): int8 split plans at
  // M = 17 and 32 0.975-1.010x (l3-70b.o and l3-70b.qkv at M = 17 0.975 and 0.978), int4 at
  // M = 33 and 64 0.992-1.004x, the Stream-K fixup's l3-70b.gate_up 0.997-1.004x. (The decode
  // main kernel measured the other way, v48 in docs/perf/decode.md: let in at its start, the next
  // launches queued their weight copies ahead of its own loads. This kernel has none.)
  gpu::allow_next_grid();
  gpu::wait_for_previous_grid();
  for (int token = blockIdx.y; token < p.m; token += gridDim.y) {
    for (int q = blockIdx.x * kReduceThreads + threadIdx.x; q < quads;
         q += gridDim.x * kReduceThreads) {
      const int col = 4 * q;
      const float* partial = p.partials + int64_t(token) * p.n_pad + col;
      const float4 sum = ordered_sum<8>(p.splits, [&](int s) {
        return reinterpret_cast<const float4*>(partial + s * split_stride);
      });
      store_four_columns(static_cast<T*>(p.y) + int64_t(token) * p.n + col, sum, col, p.n, bias);
    }
  }
}

// The grid for m tokens of n columns: enough column blocks for a row, and token rows up to about
// eight CTAs an SM in all (at most 65535, the y limit).
inline dim3 reduce_grid(int m, int n, int sm_count) {
  const int quads = (n + 3) / 4;
  const int x = (quads + kReduceThreads - 1) / kReduceThreads;
  const int64_t budget = int64_t(sm_count) * 8 / x;
  const int64_t rows = budget < m ? budget : m;
  const int64_t y = rows < 1 ? 1 : rows < 65535 ? rows : 65535;
  return dim3(x, static_cast<unsigned>(y));
}

}  // namespace sailfish::prefill
