// Decode tier support kernels.
//
// prep_kernel, one launch before the main kernel when it is needed:
//   - activations: A'[m][r] = A[m][perm[r]] (act-order) or A[m][r], zero past k, into a
//     workspace copy with 16-byte aligned rows of k_pad columns;
//   - output: Y = bias (or 0) when the main kernel adds its partial sums with red.global, so the
//     bias is added exactly once. A kernel, not a memset: a captured cudaMemsetAsync may run on
//     the copy engine and stall a graph.
// reduce_kernel, after the main kernel whenever several splits use the default epilogue: Y = sum
// of the split partials in split order + bias, the same order every run (deterministic).
//
// Both let the next grid in (launch_dependents) before their own griddepcontrol.wait: the next
// kernel reads nothing of theirs before its own wait, and the main kernel after a prep then
// issues its weight copies while the prep still waits for the layer before. With the wait first,
// an act-order call's main kernel started only once the previous layer had ended. H100, three
// interleaved rounds of act-order int4 (docs/perf/decode.md, v53): M = 1 0.78-0.98x (l3-8b.o
// 7.99 -> 6.25 us), M = 16 0.88-1.00x; the prefill tier's M = 64 0.98-1.01x.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/host_math.h"
#include "common/launch.cuh"
#include "common/ptx/griddepcontrol.cuh"
#include "decode/config.h"
#include "sailfish/sailfish.h"

namespace sailfish::decode {

struct PrepParams {
  const void* a;  // [m][lda]
  int64_t lda;
  void* a_out;    // [m][k_pad], or null: no activation copy
  const int32_t* perm;  // [k] or null
  int32_t m, k, k_pad;
  void* y;        // [m][n], or null: no output init
  const void* bias;  // [n] or null (then Y = 0)
  int32_t n;
};

template <typename T>
__global__ void prep_kernel(const PrepParams p) {
  const int64_t copies = p.a_out != nullptr ? int64_t(p.m) * p.k_pad : 0;
  const int64_t inits = p.y != nullptr ? int64_t(p.m) * p.n : 0;
  const T* a = static_cast<const T*>(p.a);
  const T* bias = static_cast<const T*>(p.bias);
  gpu::allow_next_grid();
  gpu::wait_for_previous_grid();
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < copies + inits;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (i < copies) {
      const int64_t row = i / p.k_pad;
      const int col = static_cast<int>(i % p.k_pad);
      T value = static_cast<T>(0.0f);
      if (col < p.k) value = a[row * p.lda + (p.perm != nullptr ? __ldg(p.perm + col) : col)];
      static_cast<T*>(p.a_out)[i] = value;
    } else {
      const int64_t j = i - copies;
      static_cast<T*>(p.y)[j] = bias != nullptr ? bias[j % p.n] : static_cast<T>(0.0f);
    }
  }
}

// The prep work of one run (host): the activation copy into a_out (null: none) and the output
// initialization Y = bias into y (null: none). The decode and prefill tiers both launch it.
inline PrepParams make_prep_params(const RunArgs& args, const PackedGeometry& g, int64_t m,
                                   void* a_out, void* y) {
  PrepParams prep;
  prep.a = args.a;
  prep.lda = g.k;
  prep.a_out = a_out;
  prep.perm = args.weight->perm;
  prep.m = static_cast<int>(m);
  prep.k = static_cast<int>(g.k);
  prep.k_pad = static_cast<int>(g.k_pad);
  prep.y = y;
  prep.bias = args.bias;  // read only when y is set
  prep.n = static_cast<int>(g.n);
  return prep;
}

template <typename T>
Status launch_prep(const PrepParams& prep, int sm_count, bool pdl, cudaStream_t stream,
                   const char* what) {
  const int64_t work = (prep.a_out != nullptr ? int64_t(prep.m) * prep.k_pad : 0) +
                       (prep.y != nullptr ? int64_t(prep.m) * prep.n : 0);
  return gpu::launch(prep_kernel<T>, dim3(::sailfish::detail::support_grid(work, sm_count)),
                     dim3(256), 0, stream, pdl, what, prep);
}

struct ReduceParams {
  const float* partials;  // [splits][m_pad][n_pad] (token-major; n_pad a multiple of 64)
  int32_t splits, n_pad, m_pad, m, n;
  const void* bias;       // [n] or null
  void* y;                // [m][n]
};

// Columns one reduce thread sums: one 16-byte load per split.
constexpr int kReduceColumns = 4;
constexpr int kReduceThreads = 128;

// The grid: x covers a token's columns in kReduceColumns chunks, y the tokens (grid-stride past
// the 65535 a grid dimension allows). One thread per chunk gives the most loads in flight: the
// reduce is bound by the latency of its split loads, not by their bytes (the v12b and v12c
// trials, which gave a thread several chunks, were slower; docs/perf/decode.md).
inline dim3 reduce_grid(int64_t m, int64_t n) {
  const int64_t chunks = (n + kReduceColumns - 1) / kReduceColumns;
  return dim3(static_cast<unsigned>((chunks + kReduceThreads - 1) / kReduceThreads),
              static_cast<unsigned>(std::min<int64_t>(m, 65535)));
}

// Y[token][col..col+3] = sum over splits, in split order, of the partials + bias: the order the
// cluster epilogue adds in, so the two are bitwise equal. Loads of four splits are issued before
// their sums, and the adds stay in split order.
template <typename T>
__global__ void __launch_bounds__(kReduceThreads) reduce_kernel(const ReduceParams p) {
  const int col = (blockIdx.x * kReduceThreads + threadIdx.x) * kReduceColumns;
  const T* bias = static_cast<const T*>(p.bias);
  gpu::allow_next_grid();
  gpu::wait_for_previous_grid();
  if (col >= p.n) return;
  const int64_t split_stride = int64_t(p.m_pad) * p.n_pad;
  for (int token = blockIdx.y; token < p.m; token += gridDim.y) {
    const float* source = p.partials + int64_t(token) * p.n_pad + col;
    float sum[kReduceColumns] = {0.0f, 0.0f, 0.0f, 0.0f};
    auto add = [&sum](const float4& v) {
      sum[0] += v.x;
      sum[1] += v.y;
      sum[2] += v.z;
      sum[3] += v.w;
    };
    int s = 0;
    for (; s + 4 <= p.splits; s += 4) {
      const float4 v0 = *reinterpret_cast<const float4*>(source + (s + 0) * split_stride);
      const float4 v1 = *reinterpret_cast<const float4*>(source + (s + 1) * split_stride);
      const float4 v2 = *reinterpret_cast<const float4*>(source + (s + 2) * split_stride);
      const float4 v3 = *reinterpret_cast<const float4*>(source + (s + 3) * split_stride);
      add(v0);
      add(v1);
      add(v2);
      add(v3);
    }
    for (; s < p.splits; ++s) add(*reinterpret_cast<const float4*>(source + s * split_stride));
    const int valid = p.n - col < kReduceColumns ? p.n - col : kReduceColumns;
    T out[kReduceColumns];
#pragma unroll
    for (int i = 0; i < kReduceColumns; ++i) {
      if (bias != nullptr && i < valid) sum[i] += static_cast<float>(bias[col + i]);
      out[i] = static_cast<T>(sum[i]);
    }
    T* y = static_cast<T*>(p.y) + int64_t(token) * p.n + col;
    if (valid == kReduceColumns && (reinterpret_cast<uintptr_t>(y) & 7) == 0) {
      uint2 packed;
      static_assert(sizeof(out) == sizeof(packed), "four 16-bit outputs are 8 bytes");
      memcpy(&packed, out, sizeof(packed));
      *reinterpret_cast<uint2*>(y) = packed;
    } else {
      for (int i = 0; i < valid; ++i) y[i] = out[i];
    }
  }
}

}  // namespace sailfish::decode
