// sailfish_wgmma_probe, the streamed forms (stream, stream2, stream3; wgmma_probe.cu describes
// them): the rs-dq step fed from global memory through three pipeline layouts, weights cold from
// a buffer of several GiB, activations and scales from buffers that stay in L2.
#pragma once

#include "common/ptx/cp_async.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/named_barrier.cuh"
#include "common/ptx/tma.cuh"
#include "probe_common.cuh"

namespace sailfish::probe {

// The stream form (wgmma_probe.cu): warpgroup-private rings.
struct StreamArgs {
  const uint8_t* codes;        // blocks, 2 KB each; warpgroup u streams blocks u * blocks ..
  const uint8_t* activations;  // kActivationBlocks slices of N x 128 bytes, read cyclically
  const uint8_t* scales;       // 128-byte rows, read cyclically
  int blocks;                  // per warpgroup
  int stages;
  int copy_weights, copy_activations;
  // 0: thread 0 of the warpgroup issues the stage's bulk copies, refilling a stage once the
  //    "empty" barrier says its 4 warps have retired it;
  // 1: the same, three lanes of warp 0 issuing one copy each;
  // 2: every thread cp.asyncs its own 16-byte weight run and a share of the activations and
  //    scales, arriving on "full" when they land (128 arrivals); a warpgroup barrier after the
  //    wgmma wait says the previous stage is retired, and every thread refills it;
  // 3: as 2, software-pipelined: block i + 1's "full" wait and shared loads are issued right
  //    after block i's wgmmas, so they overlap the tensor work instead of following its wait.
  int issue_form;
  float* sink;
  long long* cycles;
};
constexpr int kActivationBlocks = 128;  // 1 MB at N = 64 (8192 columns): stays in L2

template <int kN>
__host__ __device__ constexpr int stream_stage_bytes() {
  return b_tile_bytes(kN) + kBlockBytes + 1024;  // activations | codes | scale row (padded)
}

template <int kN>
__host__ __device__ constexpr int stream_max_threads() { return kN >= 64 ? 512 : 768; }

template <int kN>
__global__ void __launch_bounds__(stream_max_threads<kN>(), 1)
    stream_kernel(const __grid_constant__ StreamArgs a) {
#if SAILFISH_HAS_WGMMA
  extern __shared__ __align__(16) uint8_t smem_raw[];
  uint32_t base = 0;
  uint8_t* const smem = aligned_shared(smem_raw, &base);
  constexpr int kStage = stream_stage_bytes<kN>();
  const int warpgroup = threadIdx.x / 128, wg_thread = threadIdx.x % 128, lane = threadIdx.x % 32;
  const int stages = a.stages;
  const int warpgroups = blockDim.x / 128;
  const uint32_t ring = base + warpgroup * stages * kStage;
  uint8_t* const ring_ptr = smem + warpgroup * stages * kStage;
  const uint32_t barriers = base + warpgroups * stages * kStage + warpgroup * stages * 16;
  auto full_bar = [&](int s) { return barriers + 16u * s; };
  auto empty_bar = [&](int s) { return barriers + 16u * s + 8u; };
  // Stages hold finite data before any copy lands (left-out copies leave them as they are).
  fill_small_pairs(smem, warpgroups * stages * kStage);
  const bool per_thread = a.issue_form >= 2;
  if (wg_thread == 0) {
    for (int s = 0; s < stages; ++s) {
      gpu::mbarrier_init(full_bar(s), per_thread ? 128 : 1);
      gpu::mbarrier_init(empty_bar(s), 4);
    }
    gpu::fence_barrier_init();
  }
  __syncthreads();
  const int unit = blockIdx.x * warpgroups + warpgroup;
  const uint8_t* codes = a.codes + int64_t(unit) * a.blocks * kBlockBytes;
  const uint32_t bytes = (a.copy_weights ? kBlockBytes : 0) +
                         (a.copy_activations ? kN * 128 : 0) + 128;
  // issue_form 0 and 1: bulk copies by one thread or by lanes 0-2 of warp 0.
  auto issue = [&](int block, int s) {
    const uint32_t stage = ring + s * kStage;
    const int lanes = a.issue_form == 1 ? 3 : 1;
    if (wg_thread == 0) gpu::mbarrier_arrive_expect_tx(full_bar(s), bytes);
    if (lanes > 1) __syncwarp();
    if (a.copy_activations && wg_thread == 0) {
      gpu::bulk_copy(stage, a.activations + (block % kActivationBlocks) * (kN * 128), kN * 128,
                     full_bar(s));
    }
    if (a.copy_weights && wg_thread == (lanes > 1 ? 1 : 0)) {
      gpu::bulk_copy(stage + b_tile_bytes(kN), codes + int64_t(block) * kBlockBytes,
                     kBlockBytes, full_bar(s));
    }
    if (wg_thread == (lanes > 1 ? 2 : 0)) {
      gpu::bulk_copy(stage + b_tile_bytes(kN) + kBlockBytes, a.scales + (block % 64) * 128, 128,
                     full_bar(s));
    }
  };
  // issue_form 2: every thread its own cp.asyncs, then an arrival on "full" when they land.
  auto issue_per_thread = [&](int block, int s) {
    const uint32_t stage = ring + s * kStage;
    if (a.copy_weights) {
      gpu::cp_async_16(stage + b_tile_bytes(kN) + wg_thread * 16,
                       codes + int64_t(block) * kBlockBytes + wg_thread * 16);
    }
    if (a.copy_activations) {
      const uint8_t* src = a.activations + (block % kActivationBlocks) * (kN * 128);
#pragma unroll
      for (int c = wg_thread; c < kN * 8; c += 128) gpu::cp_async_16(stage + c * 16, src + c * 16);
    }
    if (wg_thread < 8) {
      gpu::cp_async_16(stage + b_tile_bytes(kN) + kBlockBytes + wg_thread * 16,
                       a.scales + (block % 64) * 128 + wg_thread * 16);
    }
    gpu::cp_async_arrive_noinc(full_bar(s));
  };
  for (int s = 0; s < stages && s < a.blocks; ++s) {
    if (per_thread) {
      issue_per_thread(s, s);
    } else if (wg_thread < 32) {
      issue(s, s);
    }
  }
  float acc[kN / 2] = {};
  uint32_t frag_a[4][4], frag_b[4][4];
  const int row = (wg_thread / 32) * 16 + lane / 4;
  int s = 0, previous = -1;
  uint32_t phase = 0, previous_phase = 0;
  auto step = [&](int i, uint32_t(&frag)[4][4]) {
    gpu::mbarrier_wait(full_bar(s), phase);
    const uint8_t* stage = ring_ptr + s * kStage;
    const uint4 v = *reinterpret_cast<const uint4*>(stage + b_tile_bytes(kN) + wg_thread * 16);
    const bf16* scales = reinterpret_cast<const bf16*>(stage + b_tile_bytes(kN) + kBlockBytes);
    const gpu::Pair<bf16> scale(scales[row], scales[row]), scale8(scales[row + 8], scales[row + 8]);
    run_to_scaled_fragments(v, scale, scale8, frag);
    const uint64_t desc_b = gpu::smem_descriptor_k_major_sw128(ring + s * kStage);
    gpu::wgmma_fence();
#pragma unroll
    for (int k = 0; k < 4; ++k) gpu::WgmmaRs<bf16, kN>::mma(acc, frag[k], desc_b + 2 * k, 1);
    gpu::wgmma_commit();
    gpu::wgmma_wait<1>();
    // Block i - 1's wgmmas have retired in this warp: release its stage, and refill it.
    if (previous >= 0 && per_thread) {
      gpu::named_barrier_sync(1 + warpgroup, 128);  // ... in every warp of the warpgroup
      if (i - 1 + stages < a.blocks) issue_per_thread(i - 1 + stages, previous);
    } else if (previous >= 0) {
      if (lane == 0) gpu::mbarrier_arrive(empty_bar(previous));
      if (wg_thread < 32 && i - 1 + stages < a.blocks) {
        gpu::mbarrier_wait(empty_bar(previous), previous_phase);
        issue(i - 1 + stages, previous);
      }
    }
    previous = s;
    previous_phase = phase;
    if (++s == stages) {
      s = 0;
      phase ^= 1;
    }
  };
  // issue_form 3: the shared loads of block i + 1 overlap block i's wgmmas.
  uint4 next_run = make_uint4(0, 0, 0, 0);
  uint32_t next_scales = 0;
  auto load_block = [&](int s_load, uint32_t phase_load) {
    gpu::mbarrier_wait(full_bar(s_load), phase_load);
    const uint8_t* stage = ring_ptr + s_load * kStage;
    next_run = *reinterpret_cast<const uint4*>(stage + b_tile_bytes(kN) + wg_thread * 16);
    const uint16_t* sc = reinterpret_cast<const uint16_t*>(stage + b_tile_bytes(kN) + kBlockBytes);
    next_scales = uint32_t(sc[row]) | (uint32_t(sc[row + 8]) << 16);
  };
  auto pipelined_step = [&](int i, uint32_t(&frag)[4][4]) {
    const uint4 v = next_run;
    const gpu::Pair<bf16> both = gpu::bits_as_pair<gpu::Pair<bf16>>(next_scales);
    const gpu::Pair<bf16> scale = __low2bfloat162(both), scale8 = __high2bfloat162(both);
    run_to_scaled_fragments(v, scale, scale8, frag);
    const uint64_t desc_b = gpu::smem_descriptor_k_major_sw128(ring + s * kStage);
    gpu::wgmma_fence();
#pragma unroll
    for (int k = 0; k < 4; ++k) gpu::WgmmaRs<bf16, kN>::mma(acc, frag[k], desc_b + 2 * k, 1);
    gpu::wgmma_commit();
    const int s_next = s + 1 == stages ? 0 : s + 1;
    if (i + 1 < a.blocks) load_block(s_next, s_next == 0 ? phase ^ 1 : phase);
    gpu::wgmma_wait<1>();
    if (previous >= 0) {
      gpu::named_barrier_sync(1 + warpgroup, 128);
      if (i - 1 + stages < a.blocks) issue_per_thread(i - 1 + stages, previous);
    }
    previous = s;
    previous_phase = phase;
    if (++s == stages) {
      s = 0;
      phase ^= 1;
    }
  };
  const long long start = clock64();
  if (a.issue_form == 3) {
    load_block(0, 0);
    for (int i = 0; i < a.blocks; i += 2) {
      pipelined_step(i, frag_a);
      pipelined_step(i + 1, frag_b);
    }
  } else {
    for (int i = 0; i < a.blocks; i += 2) {
      step(i, frag_a);
      step(i + 1, frag_b);
    }
  }
  const long long stop = drain_and_stop(acc, a.sink);
  record_slowest(stop - start, true, a.cycles);
#else
  __trap();
#endif
}

struct StreamRow {
  int n, warpgroups, stages, copy_weights, copy_activations, issue_form;
  double cycles_per_block = 0;
};

// small: pairs of small finite bf16 values (activations, scales); else any bits (codes).
__global__ void fill_words(uint32_t* data, size_t words, uint32_t seed, bool small) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint32_t h = hash32(uint32_t(i) ^ seed);
    data[i] = small ? kSmallBf16Pair | (h & 0x007f007fu) : h;
  }
}

// Each warpgroup streams `blocks` blocks; the code buffer holds sm_count x 6 x blocks of them
// (1.6 GB at 1024 blocks), read once per launch, so the weights come from DRAM.
template <int kN>
StreamRow measure_stream(int warpgroups, int stages, int copy_weights, int copy_activations,
                         int issue_form, int sm_count, const uint8_t* codes,
                         const uint8_t* activations,
                         const uint8_t* scales, int blocks, float* sink, long long* cycles) {
  StreamRow row{kN, warpgroups, stages, copy_weights, copy_activations, issue_form};
  const int shared = warpgroups * stages * (stream_stage_bytes<kN>() + 16) + 1024;
  if (shared > 227 * 1024) return row;
  if (!fits_registers(stream_kernel<kN>, 128 * warpgroups, stream_max_threads<kN>())) return row;
  const StreamArgs args{codes,  activations,      scales,     blocks, stages,
                        copy_weights, copy_activations, issue_form, sink,   cycles};
  row.cycles_per_block =
      median_cta_cycles(stream_kernel<kN>, 128 * warpgroups, shared, sm_count, cycles, args) /
      blocks / warpgroups;
  return row;
}

// stream2: issue form 2 with kBlocks consecutive k-blocks a stage, so that the stage's "full"
// wait and warpgroup barrier are paid once for kBlocks blocks (8 wgmmas a step at kBlocks = 2).
template <int kN, int kBlocks>
__host__ __device__ constexpr int stream2_stage_bytes() {
  return kBlocks * (b_tile_bytes(kN) + kBlockBytes) + 1024;  // activations | codes | scales
}

// Two blocks a stage hold twice the fragments: at most 4 warpgroups (3 at 64 tokens), so that ptxas
// keeps the wgmmas pipelined.
template <int kN, int kBlocks>
__host__ __device__ constexpr int stream2_max_threads() {
  return kBlocks == 1 ? stream_max_threads<kN>() : kN >= 64 ? 384 : 512;
}

template <int kN, int kBlocks>
__global__ void __launch_bounds__(stream2_max_threads<kN, kBlocks>(), 1)
    stream2_kernel(const __grid_constant__ StreamArgs a) {
#if SAILFISH_HAS_WGMMA
  extern __shared__ __align__(16) uint8_t smem_raw[];
  uint32_t base = 0;
  uint8_t* const smem = aligned_shared(smem_raw, &base);
  constexpr int kStage = stream2_stage_bytes<kN, kBlocks>();
  constexpr int kCodes = kBlocks * b_tile_bytes(kN);        // offset of the codes in a stage
  constexpr int kScales = kCodes + kBlocks * kBlockBytes;  // offset of the scale row
  const int warpgroup = threadIdx.x / 128, wg_thread = threadIdx.x % 128, lane = threadIdx.x % 32;
  const int stages = a.stages;
  const int warpgroups = blockDim.x / 128;
  const uint32_t ring = base + warpgroup * stages * kStage;
  uint8_t* const ring_ptr = smem + warpgroup * stages * kStage;
  const uint32_t barriers = base + warpgroups * stages * kStage + warpgroup * stages * 8;
  auto full_bar = [&](int s) { return barriers + 8u * s; };
  fill_small_pairs(smem, warpgroups * stages * kStage);
  if (wg_thread == 0) {
    for (int s = 0; s < stages; ++s) gpu::mbarrier_init(full_bar(s), 128);
    gpu::fence_barrier_init();
  }
  __syncthreads();
  const int unit = blockIdx.x * warpgroups + warpgroup;
  const uint8_t* codes = a.codes + int64_t(unit) * a.blocks * kBlockBytes;
  const int steps = a.blocks / kBlocks;
  auto issue = [&](int step, int s) {
    const uint32_t stage = ring + s * kStage;
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) {
      const int block = step * kBlocks + b;
      gpu::cp_async_16(stage + kCodes + b * kBlockBytes + wg_thread * 16,
                       codes + int64_t(block) * kBlockBytes + wg_thread * 16);
      const uint8_t* src = a.activations + (block % kActivationBlocks) * (kN * 128);
#pragma unroll
      for (int c = wg_thread; c < kN * 8; c += 128) {
        gpu::cp_async_16(stage + b * b_tile_bytes(kN) + c * 16, src + c * 16);
      }
    }
    if (wg_thread < 8) {
      gpu::cp_async_16(stage + kScales + wg_thread * 16,
                       a.scales + (step % 64) * 128 + wg_thread * 16);
    }
    gpu::cp_async_arrive_noinc(full_bar(s));
  };
  for (int s = 0; s < stages && s < steps; ++s) issue(s, s);
  float acc[kN / 2] = {};
  uint32_t frag_a[kBlocks][4][4], frag_b[kBlocks][4][4];
  const int row = (wg_thread / 32) * 16 + lane / 4;
  int s = 0, previous = -1;
  uint32_t phase = 0;
  auto step = [&](int i, uint32_t(&frag)[kBlocks][4][4]) {
    gpu::mbarrier_wait(full_bar(s), phase);
    const uint8_t* stage = ring_ptr + s * kStage;
    const bf16* scales = reinterpret_cast<const bf16*>(stage + kScales);
    const gpu::Pair<bf16> scale(scales[row], scales[row]), scale8(scales[row + 8], scales[row + 8]);
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) {
      const uint4 v = *reinterpret_cast<const uint4*>(stage + kCodes + b * kBlockBytes +
                                                      wg_thread * 16);
      run_to_scaled_fragments(v, scale, scale8, frag[b]);
    }
    gpu::wgmma_fence();
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) {
      const uint64_t desc_b =
          gpu::smem_descriptor_k_major_sw128(ring + s * kStage + b * b_tile_bytes(kN));
#pragma unroll
      for (int k = 0; k < 4; ++k) gpu::WgmmaRs<bf16, kN>::mma(acc, frag[b][k], desc_b + 2 * k, 1);
    }
    gpu::wgmma_commit();
    gpu::wgmma_wait<1>();
    if (previous >= 0) {
      gpu::named_barrier_sync(1 + warpgroup, 128);
      if (i - 1 + stages < steps) issue(i - 1 + stages, previous);
    }
    previous = s;
    if (++s == stages) {
      s = 0;
      phase ^= 1;
    }
  };
  const long long start = clock64();
  for (int i = 0; i < steps; i += 2) {
    step(i, frag_a);
    step(i + 1, frag_b);
  }
  const long long stop = drain_and_stop(acc, a.sink);
  record_slowest(stop - start, true, a.cycles);
#else
  __trap();
#endif
}

template <int kN, int kBlocks>
StreamRow measure_stream2(int warpgroups, int stages, int sm_count, const uint8_t* codes,
                          const uint8_t* activations, const uint8_t* scales, int blocks,
                          float* sink, long long* cycles) {
  StreamRow row{kN, warpgroups, stages, 1, 1, 10 + kBlocks};
  const int shared = warpgroups * stages * (stream2_stage_bytes<kN, kBlocks>() + 8) + 1024;
  if (shared > 227 * 1024) return row;
  auto kernel = stream2_kernel<kN, kBlocks>;
  if (!fits_registers(kernel, 128 * warpgroups, stream2_max_threads<kN, kBlocks>())) return row;
  const StreamArgs args{codes, activations, scales, blocks, stages, 1, 1, 2, sink, cycles};
  row.cycles_per_block =
      median_cta_cycles(kernel, 128 * warpgroups, shared, sm_count, cycles, args) / blocks /
      warpgroups;
  return row;
}

// stream3: one producer warp and kConsumers consumer warpgroups on kConsumers strips of the same
// k-range, sharing each stage's activations (the prefill tier's layout with four consumers and
// one CTA an SM): stage = [activations: kBlocks x N x 128 B][codes: consumer-major, kBlocks
// blocks each][scales: 128 B a consumer]. The producer's lane 0 waits for the stage to be empty,
// arms "full" and copies the activations, lanes 1 .. kConsumers each copy a consumer's kBlocks
// contiguous blocks, the next lanes its scale row. Consumers: "full" wait once a stage, then per
// block: shared load, conversion, 4 wgmmas, commit, wait for the previous block's group; a
// stage's last block retired, one arrival a warp on "empty".
constexpr int kStream3Consumers = 4;
template <int kN, int kBlocks>
__host__ __device__ constexpr int stream3_stage_bytes() {
  return kBlocks * b_tile_bytes(kN) + kStream3Consumers * kBlocks * kBlockBytes + 1024;
}

template <int kN, int kBlocks>
__global__ void __launch_bounds__(128 * kStream3Consumers + 32, 1)
    stream3_kernel(const __grid_constant__ StreamArgs a) {
#if SAILFISH_HAS_WGMMA
  extern __shared__ __align__(16) uint8_t smem_raw[];
  uint32_t base = 0;
  uint8_t* const smem = aligned_shared(smem_raw, &base);
  constexpr int kStage = stream3_stage_bytes<kN, kBlocks>();
  constexpr int kCodes = kBlocks * b_tile_bytes(kN);
  constexpr int kScales = kCodes + kStream3Consumers * kBlocks * kBlockBytes;
  const int stages = a.stages;
  const uint32_t barriers = base + stages * kStage;
  auto full_bar = [&](int s) { return barriers + 16u * s; };
  auto empty_bar = [&](int s) { return barriers + 16u * s + 8u; };
  fill_small_pairs(smem, stages * kStage);
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      gpu::mbarrier_init(full_bar(s), 1);
      gpu::mbarrier_init(empty_bar(s), 4 * kStream3Consumers);
    }
    gpu::fence_barrier_init();
  }
  __syncthreads();
  const int steps = a.blocks / kBlocks;
  const int warpgroup = threadIdx.x / 128, lane = threadIdx.x % 32;
  long long start = clock64(), stop = start;
  if (warpgroup == kStream3Consumers) {  // the producer warp
    const uint32_t bytes =
        kBlocks * kN * 128 + kStream3Consumers * (kBlocks * kBlockBytes + 128);
    int s = 0;
    uint32_t phase = 0;
    for (int i = 0; i < steps; ++i) {
      const uint32_t stage = base + s * kStage;
      if (lane == 0) {
        gpu::mbarrier_wait(empty_bar(s), phase ^ 1);
        gpu::mbarrier_arrive_expect_tx(full_bar(s), bytes);
        gpu::bulk_copy(stage, a.activations + (i * kBlocks % kActivationBlocks) * (kN * 128),
                       kBlocks * kN * 128, full_bar(s));
      }
      __syncwarp();
      if (lane >= 1 && lane <= kStream3Consumers) {
        const int c = lane - 1;
        const uint8_t* src = a.codes + (int64_t(blockIdx.x * kStream3Consumers + c) * a.blocks +
                                        int64_t(i) * kBlocks) * kBlockBytes;
        gpu::bulk_copy(stage + kCodes + c * kBlocks * kBlockBytes, src, kBlocks * kBlockBytes,
                       full_bar(s));
      } else if (lane > kStream3Consumers && lane <= 2 * kStream3Consumers) {
        const int c = lane - 1 - kStream3Consumers;
        gpu::bulk_copy(stage + kScales + c * 128, a.scales + (i % 64) * 128, 128, full_bar(s));
      }
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    }
  } else {
    const int wg_thread = threadIdx.x % 128;
    const int row = (wg_thread / 32) * 16 + lane / 4;
    float acc[kN / 2] = {};
    uint32_t frag_a[4][4], frag_b[4][4];
    int s = 0, held = -1;  // held: the stage whose last block's group may still be in flight
    uint32_t phase = 0;
    auto block_step = [&](const uint8_t* stage_ptr, uint32_t stage, int b, uint32_t(&frag)[4][4]) {
      const bf16* scales = reinterpret_cast<const bf16*>(stage_ptr + kScales + warpgroup * 128);
      const gpu::Pair<bf16> scale(scales[row], scales[row]),
          scale8(scales[row + 8], scales[row + 8]);
      const uint4 v = *reinterpret_cast<const uint4*>(
          stage_ptr + kCodes + (warpgroup * kBlocks + b) * kBlockBytes + wg_thread * 16);
      run_to_scaled_fragments(v, scale, scale8, frag);
      const uint64_t desc_b = gpu::smem_descriptor_k_major_sw128(stage + b * b_tile_bytes(kN));
      gpu::wgmma_fence();
#pragma unroll
      for (int k = 0; k < 4; ++k) gpu::WgmmaRs<bf16, kN>::mma(acc, frag[k], desc_b + 2 * k, 1);
      gpu::wgmma_commit();
      gpu::wgmma_wait<1>();
    };
    // One stage: its blocks alternate between the fragment sets `first` and `second`, so that no
    // set is rewritten while the group that reads it may be in flight.
    auto stage_step = [&](uint32_t(&first)[4][4], uint32_t(&second)[4][4]) {
      gpu::mbarrier_wait(full_bar(s), phase);
      const uint8_t* stage_ptr = smem + s * kStage;
      const uint32_t stage = base + s * kStage;
      block_step(stage_ptr, stage, 0, first);
      // That wait retired the previous stage's last group.
      if (held >= 0 && lane == 0) gpu::mbarrier_arrive(empty_bar(held));
      if (kBlocks == 2) block_step(stage_ptr, stage, 1, second);
      held = s;
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    };
    static_assert(kBlocks == 1 || kBlocks == 2, "one or two blocks a stage");
    start = clock64();
    for (int i = 0; i < steps; i += 2) {
      stage_step(frag_a, frag_b);
      if (kBlocks == 2) {
        stage_step(frag_a, frag_b);
      } else {
        stage_step(frag_b, frag_a);
      }
    }
    stop = drain_and_stop(acc, a.sink);
  }
  record_slowest(stop - start, warpgroup < kStream3Consumers, a.cycles);  // consumers only
#else
  __trap();
#endif
}

template <int kN, int kBlocks>
StreamRow measure_stream3(int stages, int sm_count, const uint8_t* codes,
                          const uint8_t* activations, const uint8_t* scales, int blocks,
                          float* sink, long long* cycles) {
  StreamRow row{kN, kStream3Consumers, stages, 1, 1, 20 + kBlocks};
  const int shared = stages * (stream3_stage_bytes<kN, kBlocks>() + 16) + 1024;
  if (shared > 227 * 1024) return row;
  const StreamArgs args{codes, activations, scales, blocks, stages, 1, 1, 0, sink, cycles};
  row.cycles_per_block = median_cta_cycles(stream3_kernel<kN, kBlocks>,
                                           128 * kStream3Consumers + 32, shared, sm_count,
                                           cycles, args) /
                         blocks / kStream3Consumers;
  return row;
}

}  // namespace sailfish::probe
