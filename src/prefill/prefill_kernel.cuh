// Prefill tier kernel: persistent, warp-specialized wgmma + TMA on the packed format (config.h).
//
// CTA = one producer warp and two consumer warpgroups (config.h: cta_threads). A piece of work is
// one 128-weight-row x kTokens-token output tile over one k-range; each CTA walks its pieces in
// the order its WorkSchedule gives (stream_k.h: the split grid's units, or a Stream-K run).
//
// Producer (one warp, one copy per lane): per k-block, waits for the stage to be empty, then
//   - the activation box [kTokens rows x 64 columns] by TMA (tensor map, 128-byte swizzle; rows
//     past M and columns past K arrive as zeros),
//   - each consumer's 64 x 64 packed weight block as one 1D bulk copy (2 KB int4, 4 KB int8: the
//     in-word permutation is invisible to a byte copy),
//   - each consumer's scale rows (and zero-shift and zero-fold rows), 128 bytes each,
// all completing on the stage's "full" mbarrier, which the producer armed with the byte total.
// Consumers: per k-block, wait "full"; one 16-byte (int4) or two (int8) shared loads per lane give
// the lane's A fragments for the block's four k16 slices; LOP3 dequantization to exact q - bias
// pairs (q - zero shift with zero points), then scale (hmul2) or scale and zero fold (hfma2) in
// the 16-bit type; four
// wgmma.m64n<kTokens>k16 with A from those registers and B from the stage's activation tile.
// Three fragment sets rotate so the dequantization of block i + 1 overlaps the tensor cores on
// blocks i and i - 1; after block i's wgmmas are committed, waiting until at most two groups are
// pending proves block i - 2's are done, and each warp releases that stage to the producer.
// Epilogue from registers: a whole tile stores Y = acc + bias (lane pairs exchange halves so each
// lane writes two adjacent columns); a split's or a Stream-K piece's tile writes fp32 partials
// that reduce_kernel or stream_k_fixup_kernel sum in a fixed order (deterministic: no atomics
// anywhere).
//
// Scaling per 16-bit pair rather than on the fp32 accumulators (as the decode tier does for
// symmetric weights): a wgmma accumulator tile is kTokens / 2 registers per thread, so a per-group
// flush would cost 64-128 multiply-adds per thread per group against 4 packed multiplies per k16
// slice here; rounding the dequantized weight to 16 bits is what a plain fp16/bf16 GEMM on the
// dequantized weight does.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "common/dequant.cuh"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/griddepcontrol.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/tma.cuh"
#include "common/ptx/wgmma.cuh"
#include "common/warp_uniform.cuh"
#include "prefill/config.h"
#include "prefill/stream_k.h"

namespace sailfish::prefill {

// kStore: one split, every tile stored; kPartials: splits > 1; kStreamK: a Stream-K grid, whose
// whole tiles are stored and shared ones written to slots (stream_k.h).
enum class PrefillEpilogue : int { kStore = 0, kPartials = 1, kStreamK = 2 };

struct PrefillParams {
  const uint8_t* codes;    // packed codes, 16-byte aligned
  const void* scales;      // [scale_rows][n_pad], 16-byte aligned
  const uint16_t* zero_shift;  // [scale_rows][n_pad] integers (docs/FORMAT.md), or null
  const void* zero_fold;   // [scale_rows][n_pad] or null
  void* y;                 // [m][n]
  const void* bias;        // [n] or null (kStore, kStreamK; the reduce adds it for kPartials)
  float* partials;         // kPartials: [splits][m_pad][n_pad]; kStreamK: [slot][kTokens][128]
  int32_t m, n;
  int32_t n_blocks, k_blocks, n_pad, m_pad;
  int32_t group_shift;     // log2(group rows); 30 for channelwise
  int32_t meta_rows;       // scale rows per k-block: 4 (group 16), 2 (group 32), else 1
  int32_t n_tiles, m_tiles, splits;
  int32_t stages;          // pipeline depth: stages of kernel_stage_bytes() in shared memory
  PrefillEpilogue epilogue;
};

namespace detail {

// Masked store of one column pair (n0, n0 + 1) for one token: edges of Y, odd n, unaligned Y.
template <typename T>
__device__ __forceinline__ void store_pair_masked(const PrefillParams& p, int token, int n0,
                                                  float lo, float hi) {
  using P = gpu::Pair<T>;
  if (token >= p.m || n0 >= p.n) return;
  T* out = static_cast<T*>(p.y) + int64_t(token) * p.n + n0;
  const bool both = n0 + 1 < p.n;
  if (both && (reinterpret_cast<uintptr_t>(out) & 3) == 0) {
    *reinterpret_cast<P*>(out) = P(static_cast<T>(lo), static_cast<T>(hi));
  } else {
    out[0] = static_cast<T>(lo);
    if (both) out[1] = static_cast<T>(hi);
  }
}

// The accumulator of wgmma m64nNk16 holds, per n8 token tile j, the mma.sync C fragment
// acc[4j .. 4j + 3] = (row g, tokens 2t, 2t + 1), (row g + 8, same tokens) of the warp's 16 rows,
// g = lane / 4, t = lane % 4. Lanes g and g ^ 1 (lane ^ 4) swap halves so each lane owns two
// adjacent output columns for two tokens: even g keeps rows (g, g + 1), odd g rows (g + 7, g + 8).
// Both epilogues then write column pairs: store_partials fp32 partials, token-major like Y so the
// reduce reads them coalesced (`partial` points at the warp's first row for the tile's first
// token, tokens `stride` floats apart); store_tile Y + bias.
template <int kTokens>
__device__ __forceinline__ void store_partials(const float (&acc)[kTokens / 2], float* partial,
                                               int stride, int lane) {
  const bool odd = (lane >> 2) & 1;
  const int column = odd ? lane / 4 + 7 : lane / 4;
#pragma unroll
  for (int j = 0; j < kTokens / 8; ++j) {
    const float c0 = acc[4 * j], c1 = acc[4 * j + 1], c2 = acc[4 * j + 2], c3 = acc[4 * j + 3];
    const float r0 = __shfl_xor_sync(0xffffffffu, odd ? c0 : c2, 4);
    const float r1 = __shfl_xor_sync(0xffffffffu, odd ? c1 : c3, 4);
    float* out = partial + int64_t(8 * j + 2 * (lane % 4)) * stride + column;
    *reinterpret_cast<float2*>(out) = make_float2(odd ? r0 : c0, odd ? c2 : r0);
    *reinterpret_cast<float2*>(out + stride) = make_float2(odd ? r1 : c1, odd ? c3 : r1);
  }
}

template <typename T, int kTokens>
__device__ __forceinline__ void store_tile(const PrefillParams& p, const float (&acc)[kTokens / 2],
                                           int row_base, int token_base, int lane) {
  using P = gpu::Pair<T>;
  const bool odd = (lane >> 2) & 1;
  const int n0 = row_base + (odd ? lane / 4 + 7 : lane / 4);
  // The thread's two columns are the same for every token: load their bias once.
  float bias_lo = 0.0f, bias_hi = 0.0f;
  if (p.bias != nullptr) {
    const T* bias = static_cast<const T*>(p.bias);
    if (n0 < p.n) bias_lo = static_cast<float>(bias[n0]);
    if (n0 + 1 < p.n) bias_hi = static_cast<float>(bias[n0 + 1]);
  }
  // Interior tiles (every token and column in range, pairs 4-byte aligned) store unmasked.
  const bool interior = token_base + kTokens <= p.m && row_base + 16 <= p.n && (p.n & 1) == 0 &&
                        (reinterpret_cast<uintptr_t>(p.y) & 3) == 0;
  T* const y = static_cast<T*>(p.y);
#pragma unroll
  for (int j = 0; j < kTokens / 8; ++j) {
    const float c0 = acc[4 * j], c1 = acc[4 * j + 1], c2 = acc[4 * j + 2], c3 = acc[4 * j + 3];
    const float r0 = __shfl_xor_sync(0xffffffffu, odd ? c0 : c2, 4);
    const float r1 = __shfl_xor_sync(0xffffffffu, odd ? c1 : c3, 4);
    const int token = token_base + 8 * j + 2 * (lane % 4);
    const float a_lo = (odd ? r0 : c0) + bias_lo, a_hi = (odd ? c2 : r0) + bias_hi;
    const float b_lo = (odd ? r1 : c1) + bias_lo, b_hi = (odd ? c3 : r1) + bias_hi;
    if (interior) {
      T* out = y + int64_t(token) * p.n + n0;
      *reinterpret_cast<P*>(out) = P(static_cast<T>(a_lo), static_cast<T>(a_hi));
      *reinterpret_cast<P*>(out + p.n) = P(static_cast<T>(b_lo), static_cast<T>(b_hi));
    } else {
      store_pair_masked<T>(p, token, n0, a_lo, a_hi);
      store_pair_masked<T>(p, token + 1, n0, b_lo, b_hi);
    }
  }
}

// The lane's A fragments for the four k16 slices of one staged 64 x 64 block, dequantized and
// scaled: frag[s] = {(g, k0k1), (g + 8, k0k1), (g, k8k9), (g + 8, k8k9)} of slice s.
// kOneScaleRow: groups of 64 and up, whose block has one scale row (two shared loads per lane, the
// common case); otherwise each slice loads the row slice_scale_row names. The caller picks the
// form once per block with a warp-uniform branch: per-slice branches on the group size and on
// zero points had cost about 40 instructions per block (SASS, 64-token kernel).
template <typename T, int kBits, bool kZeroPoints, bool kOneScaleRow>
__device__ __forceinline__ void dequantize_block(const uint8_t* weights, const T* meta_scales,
                                                 const uint16_t* meta_shifts, const T* meta_folds,
                                                 int run_offset, int row, int group_shift,
                                                 uint32_t (&frag)[4][4]) {
  using P = gpu::Pair<T>;
  uint32_t words[kBits];
#pragma unroll
  for (int c = 0; c < kBits / 4; ++c) {
    const uint4 v = *reinterpret_cast<const uint4*>(weights + run_offset + 16 * c);
    words[4 * c + 0] = v.x;
    words[4 * c + 1] = v.y;
    words[4 * c + 2] = v.z;
    words[4 * c + 3] = v.w;
  }
  // Scale (and zero subtrahend and fold) of rows g and g + 8 for each k16 slice.
  T scale_g[4], scale_g8[4], fold_g[4], fold_g8[4];
  uint32_t sub_g[4], sub_g8[4];
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    if (kOneScaleRow && s > 0) {
      scale_g[s] = scale_g[0];
      scale_g8[s] = scale_g8[0];
      fold_g[s] = fold_g[0];
      fold_g8[s] = fold_g8[0];
      sub_g[s] = sub_g[0];
      sub_g8[s] = sub_g8[0];
      continue;
    }
    const int r = kOneScaleRow ? 0 : ::sailfish::detail::slice_scale_row(group_shift, s);
    scale_g[s] = meta_scales[r * 64 + row];
    scale_g8[s] = meta_scales[r * 64 + row + 8];
    if constexpr (kZeroPoints) {
      fold_g[s] = meta_folds[r * 64 + row];
      fold_g8[s] = meta_folds[r * 64 + row + 8];
      sub_g[s] = gpu::zero_subtrahend<T, kBits>(meta_shifts[r * 64 + row]);
      sub_g8[s] = gpu::zero_subtrahend<T, kBits>(meta_shifts[r * 64 + row + 8]);
    }
  }
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    // (g, k0k1) (g, k8k9) (g + 8, k0k1) (g + 8, k8k9), each q - bias (q - shift) exactly
    P v[4];
    if constexpr (kZeroPoints && kBits == 4) {
      gpu::int4_word_to_shifted_pairs<T, /*kOneShift=*/true>(words[s], sub_g[s], sub_g8[s], v);
    } else if constexpr (kZeroPoints) {
      gpu::int8_word_to_shifted_pairs<T>(words[2 * s], sub_g[s], v);
      gpu::int8_word_to_shifted_pairs<T>(words[2 * s + 1], sub_g8[s], v + 2);
    } else if constexpr (kBits == 4) {
      gpu::int4_word_to_pairs<T>(words[s], v);
    } else {
      gpu::int8_word_to_pairs<T>(words[2 * s], v);
      gpu::int8_word_to_pairs<T>(words[2 * s + 1], v + 2);
    }
    const P scale(scale_g[s], scale_g[s]), scale8(scale_g8[s], scale_g8[s]);
    if constexpr (kZeroPoints) {
      const P fold(fold_g[s], fold_g[s]), fold8(fold_g8[s], fold_g8[s]);
      v[0] = __hfma2(v[0], scale, fold);
      v[1] = __hfma2(v[1], scale, fold);
      v[2] = __hfma2(v[2], scale8, fold8);
      v[3] = __hfma2(v[3], scale8, fold8);
    } else {
      v[0] = __hmul2(v[0], scale);
      v[1] = __hmul2(v[1], scale);
      v[2] = __hmul2(v[2], scale8);
      v[3] = __hmul2(v[3], scale8);
    }
    frag[s][0] = *reinterpret_cast<uint32_t*>(&v[0]);
    frag[s][1] = *reinterpret_cast<uint32_t*>(&v[2]);
    frag[s][2] = *reinterpret_cast<uint32_t*>(&v[1]);
    frag[s][3] = *reinterpret_cast<uint32_t*>(&v[3]);
  }
}

}  // namespace detail

template <typename T, int kBits, int kTokens, bool kZeroPoints>
__global__ void __launch_bounds__(cta_threads(kTokens), ctas_per_sm(kTokens))
    prefill_kernel(const __grid_constant__ CUtensorMap act_map,
                   const __grid_constant__ PrefillParams p) {
#if SAILFISH_HAS_WGMMA
  constexpr int kStage = stage_bytes(kBits, kTokens, kZeroPoints);
  constexpr int kMetaBytesPerConsumer = meta_bytes_per_consumer(kZeroPoints);
  constexpr int kAct = activation_stage_bytes(kTokens);
  constexpr int kBlock = block_bytes(kBits);
  constexpr int kRunBytes = kBits * 4;  // a lane's run: 16 bytes (int4) or 32 bytes (int8)
  extern __shared__ __align__(16) uint8_t smem_raw[];
  // The 128-byte swizzle needs 1024-byte aligned tiles; the dynamic base is not.
  const uint32_t raw_address = gpu::shared_address(smem_raw);
  const uint32_t base = (raw_address + 1023u) & ~1023u;
  uint8_t* const smem = smem_raw + (base - raw_address);
  const int stages = p.stages;
  const uint32_t barriers = base + stages * kStage;
  auto full_bar = [&](int stage) { return barriers + 8u * stage; };
  auto empty_bar = [&](int stage) { return barriers + 8u * (stages + stage); };

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      gpu::mbarrier_init(full_bar(s), 1);                // the producer's expect_tx arrival
      gpu::mbarrier_init(empty_bar(s), kConsumers * 4);  // one arrival per consumer warp
    }
    gpu::fence_barrier_init();
  }
  __syncthreads();
  gpu::allow_next_grid();

  const bool stream_k = p.epilogue == PrefillEpilogue::kStreamK;
  // Roles (config.h: cta_threads): one CTA per SM, warpgroup 0 produces (its warp 0 only, after
  // giving registers to the consumers) and warpgroups 1-2 consume; two CTAs per SM, warpgroups 0-1
  // consume and warp 8 produces.
  constexpr bool kOneCtaPerSm = ctas_per_sm(kTokens) == 1;
  // With one CTA an SM the role is warp_uniform: 21 fewer instructions in the 128-token loop
  // (600 -> 579), 0.964-1.002x the time at M = 128 and 256 (prefill v15). The two-CTA layout
  // keeps the plain index, as measured.
  const int warpgroup =
      kOneCtaPerSm ? gpu::warp_uniform(threadIdx.x / 128) : int(threadIdx.x / 128);
  if (kOneCtaPerSm ? warpgroup == 0 : warpgroup == kConsumers) {
    if constexpr (kOneCtaPerSm) {
      gpu::release_registers<kProducerRegisters>();
      if (threadIdx.x >= 32) return;
    }
    // The producer is one warp whose lanes issue one copy each: a single issuing thread measured
    // as the pipeline's bottleneck (the consumers waited on "full" while the producer never
    // waited on "empty"), its address arithmetic serial. Lane 0 waits for the free stage, arms
    // the barrier and loads the activations; lanes 1 .. strips the weight blocks; the next lanes
    // one scale (or zero-shift or zero-fold) row each: 1 + 2 + 2 x 4 x 3 = 27 lanes at most.
    const int lane = threadIdx.x % 32;
    if (lane == 0) gpu::prefetch_tensor_map(&act_map);
    // Activations (and, for the epilogue, Y and the partials) may belong to the previous kernel;
    // with two CTAs an SM the first stage's weights go out before the wait (kEarlyStages below).
    constexpr int kEarlyStages = kOneCtaPerSm ? 0 : 1;
    if constexpr (kEarlyStages == 0) gpu::wait_for_previous_grid();
    const int kinds = kZeroPoints ? 3 : 1;
    // This lane's meta copy (scale, shift or fold row r of consumer c), if any.
    const int meta_index = lane - 1 - kConsumers;
    const T* meta_source = static_cast<const T*>(p.scales);
    int meta_c = 0, meta_r = 0, meta_kind = 0;
    if (meta_index >= 0) {
      meta_c = meta_index % kConsumers;
      meta_r = (meta_index / kConsumers) % p.meta_rows;
      meta_kind = meta_index / (kConsumers * p.meta_rows);
      // The three arrays share the [scale_rows][n_pad] layout of 2-byte elements.
      if constexpr (kZeroPoints) {
        if (meta_kind == 1) meta_source = reinterpret_cast<const T*>(p.zero_shift);
        if (meta_kind == 2) meta_source = static_cast<const T*>(p.zero_fold);
      }
    }
    const uint32_t meta_dst_offset = kAct + kConsumers * kBlock + meta_c * kMetaBytesPerConsumer +
                                     meta_kind * kMetaPartBytes + meta_r * 128;
    int stage = 0;
    uint32_t phase = 0;
    WorkSchedule schedule(p.n_tiles, p.m_tiles, p.k_blocks, p.splits, stream_k, blockIdx.x,
                          gridDim.x);
    WorkPiece piece;
    // The weights and their scale rows are never the previous kernel's. So with two CTAs an SM
    // the first piece's first stage takes its weight and scale copies before
    // gpu::wait_for_previous_grid(), while the previous kernel drains, and its activations after
    // it; the stage's barrier is armed for all its bytes first, so it cannot complete before
    // they land. H100 A/B (docs/perf/prefill.md, stop 61): one stage ran 0.87-1.01x the time at
    // M = 17-64 on 47 of 48 int4 and int8 rows (l3-8b.o 0.87-0.95; int8 l3-70b.gate_up at M = 64
    // 1.04x, Stream-K, as much with that grid waiting first), two stages less well
    // (0.97-1.02x), all seven 1.02-1.10x (the first activations queue behind ~56 KB of weights
    // an SM); with one CTA an SM (128 and 256 tokens) one stage ran 1.01-1.04x at M = 128, so
    // that layout waits first, as before.
    bool waited = kEarlyStages == 0;
    while (schedule.next(&piece)) {
      const UnitCoord u = piece.unit;
      const int kb_begin = piece.kb_begin, kb_end = piece.kb_end;
      const int strips = p.n_blocks - kConsumers * u.n_tile < kConsumers
                             ? p.n_blocks - kConsumers * u.n_tile
                             : kConsumers;
      const uint32_t bytes = kAct + strips * (kBlock + p.meta_rows * 128 * kinds);
      const bool weight_lane = lane >= 1 && lane <= strips;
      const bool meta_lane =
          meta_index >= 0 && meta_index < kConsumers * p.meta_rows * kinds && meta_c < strips;
      const int strip = kConsumers * u.n_tile + (weight_lane ? lane - 1 : meta_c);
      const uint8_t* strip_codes = p.codes + int64_t(strip) * p.k_blocks * kBlock;
      const T* strip_meta = meta_source + strip * 64 + int64_t(meta_r) * p.n_pad;
      const int count = kb_end - kb_begin;
      const int rotation = k_rotation(u, count);
      auto k_block = [&](int j) {
        return kb_begin + (j + rotation < count ? j + rotation : j + rotation - count);
      };
      auto load_activations = [&](int kb, uint32_t dst, int at_stage) {
        gpu::tma_load_2d(dst, &act_map, kb * 64, u.m_tile * kTokens, full_bar(at_stage));
      };
      // Stage `stage` for piece block j: free and armed by lane 0 (with the activations' copy if
      // `activations`), then the weight and scale copies.
      auto fill_stage = [&](int j, bool activations) {
        const int kb = k_block(j);
        const uint32_t dst = base + stage * kStage;
        if (lane == 0) {
          gpu::mbarrier_wait(empty_bar(stage), phase ^ 1);
          gpu::mbarrier_arrive_expect_tx(full_bar(stage), bytes);
          if (activations) load_activations(kb, dst, stage);
        }
        __syncwarp();  // the stage is free and armed before any other lane's copy targets it
        if (weight_lane) {
          gpu::bulk_copy(dst + kAct + (lane - 1) * kBlock, strip_codes + int64_t(kb) * kBlock,
                         kBlock, full_bar(stage));
        } else if (meta_lane) {
          const int64_t group = (kb * 64) >> p.group_shift;
          gpu::bulk_copy(dst + meta_dst_offset, strip_meta + group * p.n_pad, 128,
                         full_bar(stage));
        }
        if (++stage == stages) {
          stage = 0;
          phase ^= 1;
        }
      };
      int j = 0;
      if (!waited) {  // the first piece: stages 0 .. early - 1 of the ring, all free
        const int early = count < kEarlyStages ? count : kEarlyStages;
        for (; j < early; ++j) fill_stage(j, false);
        gpu::wait_for_previous_grid();
        waited = true;
        if (lane == 0) {
          for (int e = 0; e < early; ++e) load_activations(k_block(e), base + e * kStage, e);
        }
      }
      for (; j < count; ++j) fill_stage(j, true);
    }
    if (!waited) gpu::wait_for_previous_grid();  // no piece
    return;
  }

  if constexpr (kOneCtaPerSm) gpu::claim_registers<kConsumerRegisters>();
  gpu::wait_for_previous_grid();
  const int consumer = kOneCtaPerSm ? warpgroup - 1 : warpgroup;
  const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  const int run_offset = (warp * 32 + lane) * kRunBytes;
  const int row = warp * 16 + lane / 4;  // A-fragment row g within the consumer's 64

  float acc[kTokens / 2];
  // Fragment sets: up to kSets - 1 blocks' wgmma groups stay in flight while the next set is being
  // written (a set may be rewritten only once its group has completed). Three with one CTA per
  // SM; two with two CTAs per SM, whose 96-register budget made ptxas serialize the 64-token
  // kernels' wgmma with a third set, and whose narrow wgmmas finish quickly (config.h:
  // fragment_sets).
  constexpr int kSets = fragment_sets(kTokens);
  uint32_t frag_a[4][4], frag_b[4][4], frag_c[kSets == 3 ? 4 : 1][4];
  int stage = 0;
  int older = -1, newer = -1;  // stages whose wgmma groups may still be in flight, oldest first
  uint32_t phase = 0;

  // One k-block: wait for its stage, dequantize into `frag`, issue its four wgmmas; then wait
  // until at most kSets - 1 groups are pending, which retires the block kSets - 1 steps back,
  // and release that block's stage to the producer.
  auto step = [&](uint32_t(&frag)[4][4]) {
    gpu::mbarrier_wait(full_bar(stage), phase);
    const uint8_t* st = smem + stage * kStage;
    const T* meta_scales = reinterpret_cast<const T*>(st + kAct + kConsumers * kBlock +
                                                      consumer * kMetaBytesPerConsumer);
    const uint8_t* weights = st + kAct + consumer * kBlock;
    const auto* meta_shifts = reinterpret_cast<const uint16_t*>(meta_scales + kMetaPartBytes / 2);
    const T* meta_folds = meta_scales + kMetaPartBytes;
    if (p.group_shift >= 6) {
      detail::dequantize_block<T, kBits, kZeroPoints, true>(
          weights, meta_scales, meta_shifts, meta_folds, run_offset, row, p.group_shift, frag);
    } else {
      detail::dequantize_block<T, kBits, kZeroPoints, false>(
          weights, meta_scales, meta_shifts, meta_folds, run_offset, row, p.group_shift, frag);
    }
    const uint64_t desc = gpu::smem_descriptor_k_major_sw128(base + stage * kStage);
    gpu::wgmma_fence();
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      // +32 bytes per k16 slice: 2 in the descriptor's 16-byte address units.
      gpu::WgmmaRs<T, kTokens>::mma(acc, frag[s], desc + 2 * s, 1);
    }
    gpu::wgmma_commit();
    gpu::wgmma_wait<kSets - 1>();
    // One lane a warp releases the stage, with no __syncwarp before it: every lane's loads of
    // that stage's weights and scales fed fragments that a later wgmma (.sync.aligned, so the
    // whole warp converged on it) has already consumed, and the wait above, also executed by
    // the whole warp, retired that stage's reads of the activations.
    if constexpr (kSets == 3) {
      if (older >= 0 && lane == 0) gpu::mbarrier_arrive(empty_bar(older));
      older = newer;
    } else {
      if (newer >= 0 && lane == 0) gpu::mbarrier_arrive(empty_bar(newer));
    }
    newer = stage;
    if (++stage == stages) {
      stage = 0;
      phase ^= 1;
    }
  };

  WorkSchedule schedule(p.n_tiles, p.m_tiles, p.k_blocks, p.splits, stream_k, blockIdx.x,
                        gridDim.x);
  WorkPiece piece;
  while (schedule.next(&piece)) {
    const UnitCoord u = piece.unit;
    const int kb_begin = piece.kb_begin, kb_end = piece.kb_end;
#pragma unroll
    for (int i = 0; i < kTokens / 2; ++i) {
      acc[i] = 0.0f;
      gpu::fence_register(acc[i]);
    }
    for (int kb = kb_begin; kb < kb_end; kb += kSets) {
      step(frag_a);
      if (kb + 1 < kb_end) step(frag_b);
      if constexpr (kSets == 3) {
        if (kb + 2 < kb_end) step(frag_c);
      }
    }
    gpu::wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < kTokens / 2; ++i) gpu::fence_register(acc[i]);
    if (lane == 0) {
      if (older >= 0) gpu::mbarrier_arrive(empty_bar(older));
      if (newer >= 0) gpu::mbarrier_arrive(empty_bar(newer));
    }
    older = newer = -1;

    const int strip = kConsumers * u.n_tile + consumer;
    if (strip < p.n_blocks) {
      // Branches on the piece and the plan only (warp-uniform): a test on a pointer that
      // depends on the warp made ptxas keep the loop's stage cursors in vector registers
      // (+20 instructions a 128-token pass).
      const int row_base = strip * 64 + warp * 16;
      if (piece.slot >= 0) {
        detail::store_partials<kTokens>(acc,
                                        p.partials + piece.slot * stream_k_slot_floats(kTokens) +
                                            consumer * 64 + warp * 16,
                                        128, lane);
      } else if (p.epilogue == PrefillEpilogue::kPartials) {
        const int64_t token_row = int64_t(u.split) * p.m_pad + u.m_tile * kTokens;
        detail::store_partials<kTokens>(acc, p.partials + token_row * p.n_pad + row_base, p.n_pad,
                                        lane);
      } else {
        detail::store_tile<T, kTokens>(p, acc, row_base, u.m_tile * kTokens, lane);
      }
    }
  }
#else
  // Built without sm_90a: plan() never selects this tier (it checks the kernel's binary
  // version), so reaching here is a bug; fail loudly instead of returning garbage.
  __trap();
#endif
}

}  // namespace sailfish::prefill
