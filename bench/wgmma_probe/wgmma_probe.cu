// sailfish_wgmma_probe: what one 64 x 64 int4 weight block costs an SM in the tensor-core
// mainloop alone, with the weights and activations already in shared memory (no global memory,
// no pipeline), for each instruction form a decode or narrow-prefill kernel could be built on:
//
//   rs      wgmma.m64nNk16, A from registers (the prefill tier's form), B from shared memory; the
//           four k16 wgmmas of a block, commit, wait until one group is left in flight;
//   ss      the same with A from shared memory too;
//   rs-dq   each thread loads its 16-byte run of the block from shared memory, converts it
//           (int4 -> bf16 q - 8, times a scale: the prefill consumer's dequantization) and feeds
//           RS wgmma; two fragment sets, one group in flight (the prefill consumer without its
//           barriers and copies);
//   ss-dq   the same conversion, the fragments written back with stmatrix into a 128-byte-swizzled
//           K-major A tile (two tiles, alternating), fence.proxy.async, a warpgroup barrier, then
//           SS wgmma: the "transform" form of the first seed's Blackwell prefill;
//   mma-dq  the decode tier's warp-split step: a warp converts a whole block (16 words a lane;
//           offset form with a correction mma at 1-2 token tiles, subtract and scale per pair at
//           4) and runs mma.sync.m16n8k16 for N / 8 token tiles, activations by ldmatrix.
//   stream  rs-dq fed from global memory: blocks of 2 KB of codes from a buffer of several GiB
//           (cold), activation slices (N x 128 B) from a 1 MB buffer that stays in L2 and a
//           128-byte scale row a block, through three pipeline layouts:
//             stream   a ring per warpgroup, refilled by one thread's bulk copies (issue form 0),
//                      by three lanes' (1), or by every thread's own cp.asyncs arriving on the
//                      stage's "full" mbarrier (2; 3 = the same with the next block's shared
//                      loads issued before the wgmma wait), optionally with the weight or
//                      activation copies left out;
//             stream2  form 2 with one or two k-blocks a stage (issue 11, 12);
//             stream3  a producer warp and four consumer warpgroups on four strips of the same
//                      k-range, sharing each stage's activations (the prefill tier's layout at
//                      one CTA an SM), one or two k-blocks a stage (issue 21, 22).
//
// The question it was written for (docs/perf/prefill.md, "the profile behind v4"): does a
// register-A wgmma cost a fixed ~60 SM cycles whatever its width N? If so no RS-wgmma kernel
// could stream int4 weights at the DRAM rate for N <= 64 (four wgmmas a block). It does not
// (perf/prefill.md, v13): the cost of the narrow tiles is in their pipeline's stages.
//
// One CTA per SM (its shared memory is sized to keep a second one off), W warpgroups a CTA; each
// warp times its loop with clock64 (SM cycles, so the SM clock does not enter). Printed: SM
// cycles per block (all the CTA's blocks of one iteration over its cycles per iteration), against
// 122, the cycles per 2 KB block at which an SM must retire blocks to stream 4.4 TB/s at 1.98 GHz
// on 132 SMs.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/dequant.cuh"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/fence_proxy.cuh"
#include "common/ptx/ldmatrix.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/mma_sync.cuh"
#include "common/ptx/named_barrier.cuh"
#include "common/ptx/stmatrix.cuh"
#include "common/ptx/tma.cuh"
#include "common/ptx/wgmma.cuh"

namespace {

#define PROBE_CHECK(call)                                                       \
  do {                                                                          \
    cudaError_t e_ = (call);                                                    \
    if (e_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));          \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

using bf16 = __nv_bfloat16;
using namespace sailfish;

enum class Form { kRs, kSs, kRsDequant, kSsDequant, kMmaDequant };
const char* form_name(Form f) {
  switch (f) {
    case Form::kRs: return "rs";
    case Form::kSs: return "ss";
    case Form::kRsDequant: return "rs-dq";
    case Form::kSsDequant: return "ss-dq";
    case Form::kMmaDequant: return "mma-dq";
  }
  return "?";
}

constexpr int kBlockBytes = 2048;                       // one 64 x 64 int4 block
constexpr int kATileBytes = 64 * 128;                   // one 64 x 64 bf16 tile, K-major
constexpr int kMinSharedBytes = 120 * 1024;             // keeps a second CTA off the SM
constexpr uint32_t kSmallBf16Pair = 0x3c003c00u;        // {0.0078, 0.0078}

__host__ __device__ constexpr int b_tile_bytes(int n) { return (n * 128 + 1023) / 1024 * 1024; }
// Per warpgroup: [B tile (activations, n x 128 B)] [two A tiles] [two 2 KB code areas];
// mma-dq per warp: [activations, n x 128 B] [two 2 KB code areas].
__host__ __device__ constexpr int region_bytes(Form f, int n) {
  return f == Form::kMmaDequant ? b_tile_bytes(n) + 2 * kBlockBytes
                                : b_tile_bytes(n) + 2 * kATileBytes + 2 * kBlockBytes;
}
__host__ __device__ constexpr int regions_per_cta(Form f, int warpgroups) {
  return f == Form::kMmaDequant ? 4 * warpgroups : warpgroups;
}
// The launch bound, so that ptxas gives each instance the registers its accumulators need:
// 256-token wgmma holds 128 accumulators a thread (two warpgroups at most), 128-token 64 (three:
// at four ptxas serialized the wgmmas); mma-dq at 8 tokens and rs-dq at 16 run up to 6
// warpgroups (24 warps), everything else up to 4 (mma-dq at 16 tokens spilled 24 bytes in the 80
// registers of 6).
__host__ __device__ constexpr int max_threads(Form f, int n) {
  return f == Form::kMmaDequant || (f == Form::kRsDequant && n <= 32)
             ? (n <= (f == Form::kMmaDequant ? 8 : 16) ? 768 : 512)
             : n == 256 ? 256 : n == 128 ? 384 : 512;
}

__device__ __forceinline__ uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

__device__ __forceinline__ uint4 load_shared_16(uint32_t address) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(address));
  return v;
}

// The CTA's time, its slowest timed warp (lane 0 of each warp with `timed` reports), into
// cycles[blockIdx.x]. Every thread of the CTA calls it.
__device__ __forceinline__ void record_slowest(long long taken, bool timed, long long* cycles) {
  __shared__ unsigned long long slowest;
  if (threadIdx.x == 0) slowest = 0;
  __syncthreads();
  if (timed && threadIdx.x % 32 == 0) atomicMax(&slowest, static_cast<unsigned long long>(taken));
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = static_cast<long long>(slowest);
}

#if SAILFISH_HAS_WGMMA
// The end of a timed wgmma loop: drains the warp's wgmma groups and reads the clock. The
// accumulators' sum is stored only if it hits a magic value, so none of them is dead code.
template <int kRegs>
__device__ __forceinline__ long long drain_and_stop(float (&acc)[kRegs], float* sink) {
  gpu::wgmma_wait<0>();
#pragma unroll
  for (int r = 0; r < kRegs; ++r) gpu::fence_register(acc[r]);
  const long long stop = clock64();
  float result = 0.0f;
#pragma unroll
  for (int r = 0; r < kRegs; ++r) result += acc[r];
  if (result == 1234.5f) sink[0] = result;
  return stop;
}
#endif

// Converts one word into an A fragment: q - 8, exact, times a scale (one hmul2 a pair).
__device__ __forceinline__ void word_to_scaled_fragment(uint32_t word, uint32_t (&frag)[4]) {
  gpu::Pair<bf16> v[4];
  gpu::int4_word_to_pairs<bf16>(word, v);
  const gpu::Pair<bf16> scale = gpu::bits_as_pair<gpu::Pair<bf16>>(kSmallBf16Pair);
#pragma unroll
  for (int r = 0; r < 4; ++r) v[r] = __hmul2(v[r], scale);
  // mma fragment order: (g, k0k1) (g + 8, k0k1) (g, k8k9) (g + 8, k8k9)
  frag[0] = gpu::pair_bits(v[0]);
  frag[1] = gpu::pair_bits(v[2]);
  frag[2] = gpu::pair_bits(v[1]);
  frag[3] = gpu::pair_bits(v[3]);
}

// The four A fragments of one thread's 16-byte run (four words, four k16 slices): q - 8, exact,
// times the scale of rows g (`scale`) and g + 8 (`scale8`), one hmul2 a pair.
__device__ __forceinline__ void run_to_scaled_fragments(uint4 run, gpu::Pair<bf16> scale,
                                                        gpu::Pair<bf16> scale8,
                                                        uint32_t (&frag)[4][4]) {
  const uint32_t words[4] = {run.x, run.y, run.z, run.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    gpu::Pair<bf16> q[4];
    gpu::int4_word_to_pairs<bf16>(words[k], q);
    frag[k][0] = gpu::pair_bits(__hmul2(q[0], scale));
    frag[k][1] = gpu::pair_bits(__hmul2(q[2], scale8));
    frag[k][2] = gpu::pair_bits(__hmul2(q[1], scale));
    frag[k][3] = gpu::pair_bits(__hmul2(q[3], scale8));
  }
}

template <Form kForm, int kN>
__global__ void __launch_bounds__(max_threads(kForm, kN), 1)
    probe_kernel(int iterations, float* sink, long long* cycles) {
#if SAILFISH_HAS_WGMMA
  extern __shared__ __align__(16) uint8_t smem_raw[];
  const uint32_t raw = gpu::shared_address(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  uint8_t* const smem = smem_raw + (base - raw);
  const int warpgroups = blockDim.x / 128;
  const int regions = regions_per_cta(kForm, warpgroups);
  constexpr int kRegion = region_bytes(kForm, kN);
  // Codes: any bits. Activations and A tiles: small bf16 values, so nothing overflows.
  for (int i = threadIdx.x; i < regions * kRegion / 4; i += blockDim.x) {
    const int in_region = (i * 4) % kRegion;
    const uint32_t h = hash32(i * 2654435761u + blockIdx.x);
    const bool codes = in_region >= kRegion - 2 * kBlockBytes;
    reinterpret_cast<uint32_t*>(smem)[i] = codes ? h : (kSmallBf16Pair | (h & 0x007f007fu));
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warpgroup = threadIdx.x / 128, wg_thread = threadIdx.x % 128;
  const int region = kForm == Form::kMmaDequant ? warp : warpgroup;
  const uint32_t region_address = base + region * kRegion;
  const uint32_t b_tile = region_address;
  const uint32_t a_tiles = region_address + b_tile_bytes(kN);
  const uint32_t codes = region_address + kRegion - 2 * kBlockBytes;
  float result = 0.0f;
  long long start = 0, stop = 0;

  if constexpr (kForm == Form::kMmaDequant) {
    constexpr int kTiles = kN / 8;
    constexpr bool kOffsetForm = kTiles <= 2;
    float acc[4][kTiles][4] = {};
    float correction[kTiles][4] = {};
    // ldmatrix row addresses (decode warp-split kernel: 128-byte rows, XOR-swizzled chunks).
    uint32_t ldm[kTiles][2];
#pragma unroll
    for (int tt = 0; tt < kTiles; ++tt) {
      const int row = tt * 8 + (lane & 7);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        ldm[tt][h] = b_tile + row * 128 + (((4 * h + (lane >> 3)) ^ (row & 7)) << 4);
      }
    }
    const uint32_t unit = gpu::pair_bits(__float2bfloat162_rn(-136.0f));
    start = clock64();
    for (int i = 0; i < iterations; ++i) {
      const uint32_t run = codes + (i & 1) * kBlockBytes + lane * 16;
      uint32_t words[4][4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const uint4 v = load_shared_16(run + j * 512);
        words[j][0] = v.x;
        words[j][1] = v.y;
        words[j][2] = v.z;
        words[j][3] = v.w;
      }
#pragma unroll
      for (int sp = 0; sp < 4; sp += 2) {
        uint32_t b[kTiles][4];
#pragma unroll
        for (int tt = 0; tt < kTiles; ++tt) gpu::ldmatrix_x4(ldm[tt][sp / 2], b[tt]);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            uint32_t a[4];
            if constexpr (kOffsetForm) {
              gpu::Pair<bf16> v[4];
              gpu::int4_word_to_offset_pairs<bf16>(words[j][sp + half], v);
              a[0] = gpu::pair_bits(v[0]);
              a[1] = gpu::pair_bits(v[2]);
              a[2] = gpu::pair_bits(v[1]);
              a[3] = gpu::pair_bits(v[3]);
            } else {
              word_to_scaled_fragment(words[j][sp + half], a);
            }
#pragma unroll
            for (int tt = 0; tt < kTiles; ++tt) {
              gpu::mma_m16n8k16<bf16>(acc[j][tt], a, b[tt][2 * half], b[tt][2 * half + 1]);
            }
          }
          if (kOffsetForm && half == 0) {
#pragma unroll
            for (int tt = 0; tt < kTiles; ++tt) {
              gpu::mma_m16n8k16<bf16>(correction[tt], b[tt], unit, unit);
            }
          }
        }
      }
    }
    stop = clock64();
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int tt = 0; tt < kTiles; ++tt) {
#pragma unroll
        for (int r = 0; r < 4; ++r) result += acc[j][tt][r] + correction[tt][r];
      }
    }
  } else {
    float acc[kN / 2] = {};
    const uint64_t desc_b = gpu::smem_descriptor_k_major_sw128(b_tile);
    const int warp_in_group = warp % 4;
    // stmatrix addresses of the thread's four matrices (ss-dq): matrix q = lane / 8 of slice s is
    // rows 16 w + 8 (q & 1) .. + 7, k 16 s + 8 (q >> 1) .. + 7; lane supplies row lane % 8.
    const int st_row = 16 * warp_in_group + 8 * ((lane >> 3) & 1) + (lane & 7);
    const int st_chunk = lane >> 4;  // + 2 s
    uint32_t frag_fixed[4][4];
#pragma unroll
    for (int s = 0; s < 4; ++s) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        frag_fixed[s][r] = kSmallBf16Pair | ((lane * 7 + s * 3 + r) & 0x3f);
      }
    }
    auto step = [&](int i, uint32_t(&frag)[4][4]) {
      if constexpr (kForm == Form::kRsDequant || kForm == Form::kSsDequant) {
        const uint4 v = load_shared_16(codes + (i & 1) * kBlockBytes + wg_thread * 16);
        word_to_scaled_fragment(v.x, frag[0]);
        word_to_scaled_fragment(v.y, frag[1]);
        word_to_scaled_fragment(v.z, frag[2]);
        word_to_scaled_fragment(v.w, frag[3]);
      }
      const uint32_t a_tile = a_tiles + (i & 1) * kATileBytes;
      if constexpr (kForm == Form::kSsDequant) {
#pragma unroll
        for (int s = 0; s < 4; ++s) {
          const int chunk = 2 * s + st_chunk;
          gpu::stmatrix_x4(a_tile + st_row * 128 + ((chunk ^ (st_row & 7)) << 4), frag[s]);
        }
        gpu::fence_proxy_async_shared();
        gpu::named_barrier_sync(1 + warpgroup, 128);
      }
      const uint64_t desc_a = gpu::smem_descriptor_k_major_sw128(a_tile);
      gpu::wgmma_fence();
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        if constexpr (kForm == Form::kRs || kForm == Form::kRsDequant) {
          gpu::WgmmaRs<bf16, kN>::mma(acc, kForm == Form::kRs ? frag_fixed[s] : frag[s],
                                      desc_b + 2 * s, 1);
        } else {
          gpu::WgmmaSs<bf16, kN>::mma(acc, desc_a + 2 * s, desc_b + 2 * s, 1);
        }
      }
      gpu::wgmma_commit();
      gpu::wgmma_wait<1>();
    };
    uint32_t frag_a[4][4], frag_b[4][4];
    start = clock64();
    for (int i = 0; i < iterations; i += 2) {
      step(i, frag_a);
      step(i + 1, frag_b);
    }
    stop = drain_and_stop(acc, sink);
  }
  record_slowest(stop - start, true, cycles);
  if (result == 1234.5f) sink[0] = result;  // keeps the mma-dq accumulators alive
#else
  __trap();
#endif
}


// Launches kernel(args...) twice on one CTA an SM (the first pass warms the clocks and the
// instruction cache) and returns the median over the SMs of the second pass's CTA cycles.
template <typename Kernel, typename... Args>
double median_cta_cycles(Kernel kernel, int threads, int shared, int sm_count,
                         const long long* cycles_device, Args... args) {
  shared = std::max(shared, kMinSharedBytes);
  PROBE_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
  for (int pass = 0; pass < 2; ++pass) {
    kernel<<<sm_count, threads, shared>>>(args...);
    PROBE_CHECK(cudaGetLastError());
    PROBE_CHECK(cudaDeviceSynchronize());
  }
  std::vector<long long> cycles(sm_count);
  PROBE_CHECK(cudaMemcpy(cycles.data(), cycles_device, sm_count * sizeof(long long),
                         cudaMemcpyDeviceToHost));
  std::sort(cycles.begin(), cycles.end());
  return static_cast<double>(cycles[sm_count / 2]);
}

// Whether `threads` threads of `kernel` fit its launch bound and the register file.
template <typename Kernel>
bool fits_registers(Kernel kernel, int threads, int max_threads, int* registers = nullptr) {
  cudaFuncAttributes attributes{};
  PROBE_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  if (registers != nullptr) *registers = attributes.numRegs;
  return threads <= max_threads && attributes.numRegs * threads <= 65536;
}

// The stream form (see the top): warpgroup-private rings fed by bulk copies.
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
  const uint32_t raw = gpu::shared_address(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  uint8_t* const smem = smem_raw + (base - raw);
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
  for (int i = threadIdx.x; i < warpgroups * stages * kStage / 4; i += blockDim.x) {
    reinterpret_cast<uint32_t*>(smem)[i] = kSmallBf16Pair | (hash32(i) & 0x007f007fu);
  }
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
  const uint32_t raw = gpu::shared_address(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  uint8_t* const smem = smem_raw + (base - raw);
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
  for (int i = threadIdx.x; i < warpgroups * stages * kStage / 4; i += blockDim.x) {
    reinterpret_cast<uint32_t*>(smem)[i] = kSmallBf16Pair | (hash32(i) & 0x007f007fu);
  }
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
  const uint32_t raw = gpu::shared_address(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  uint8_t* const smem = smem_raw + (base - raw);
  constexpr int kStage = stream3_stage_bytes<kN, kBlocks>();
  constexpr int kCodes = kBlocks * b_tile_bytes(kN);
  constexpr int kScales = kCodes + kStream3Consumers * kBlocks * kBlockBytes;
  const int stages = a.stages;
  const uint32_t barriers = base + stages * kStage;
  auto full_bar = [&](int s) { return barriers + 16u * s; };
  auto empty_bar = [&](int s) { return barriers + 16u * s + 8u; };
  for (int i = threadIdx.x; i < stages * kStage / 4; i += blockDim.x) {
    reinterpret_cast<uint32_t*>(smem)[i] = kSmallBf16Pair | (hash32(i) & 0x007f007fu);
  }
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

struct Row {
  Form form;
  int n, warpgroups;
  int registers = 0;
  double cycles_per_block = 0;  // SM cycles per 64 x 64 block, all the CTA's blocks together
  const char* skipped = nullptr;
};

template <Form kForm, int kN>
Row measure(int warpgroups, int sm_count, float* sink, long long* cycles_device) {
  Row row{kForm, kN, warpgroups};
  auto kernel = probe_kernel<kForm, kN>;
  const int threads = 128 * warpgroups;
  if (!fits_registers(kernel, threads, max_threads(kForm, kN), &row.registers)) {
    row.skipped = "registers";
    return row;
  }
  const int shared = regions_per_cta(kForm, warpgroups) * region_bytes(kForm, kN) + 1024;
  if (shared > 227 * 1024) {
    row.skipped = "shared memory";
    return row;
  }
  constexpr int kIterations = 4096;
  const int blocks_per_iteration = regions_per_cta(kForm, warpgroups);
  row.cycles_per_block = median_cta_cycles(kernel, threads, shared, sm_count, cycles_device,
                                           kIterations, sink, cycles_device) /
                         kIterations / blocks_per_iteration;
  return row;
}

// 1 .. max_threads / 128 warpgroups a CTA, each width.
template <Form kForm, int kN>
void measure_all(std::vector<Row>* rows, int sm_count, float* sink, long long* cycles) {
  for (int w = 1; w <= max_threads(kForm, kN) / 128; ++w) {
    rows->push_back(measure<kForm, kN>(w, sm_count, sink, cycles));
  }
}
template <Form kForm, int... kNs>
void measure_widths(std::vector<Row>* rows, int sm_count, float* sink, long long* cycles) {
  (measure_all<kForm, kNs>(rows, sm_count, sink, cycles), ...);
}

}  // namespace

int main() {
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "sailfish_wgmma_probe: no CUDA device\n");
    return 2;
  }
  cudaDeviceProp prop{};
  PROBE_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major != 9) {
    std::fprintf(stderr, "sailfish_wgmma_probe: needs an sm_90 device, found sm_%d%d\n",
                 prop.major, prop.minor);
    return 2;
  }
  float* sink = nullptr;
  long long* cycles = nullptr;
  PROBE_CHECK(cudaMalloc(&sink, sizeof(float)));
  PROBE_CHECK(cudaMalloc(&cycles, prop.multiProcessorCount * sizeof(long long)));
  std::vector<Row> rows;
  const int sms = prop.multiProcessorCount;
  measure_widths<Form::kRs, 8, 16, 32, 64, 128, 256>(&rows, sms, sink, cycles);
  measure_widths<Form::kSs, 8, 16, 32, 64, 128, 256>(&rows, sms, sink, cycles);
  measure_widths<Form::kRsDequant, 16, 32, 64>(&rows, sms, sink, cycles);
  measure_widths<Form::kSsDequant, 16, 32, 64>(&rows, sms, sink, cycles);
  measure_widths<Form::kMmaDequant, 8, 16, 32>(&rows, sms, sink, cycles);

  // The stream form: every warpgroup its own ring, 4 warpgroups an SM unless noted.
  constexpr int kStreamBlocks = 1024;
  const size_t code_bytes = size_t(sms) * 6 * kStreamBlocks * kBlockBytes;  // 6 warpgroups an SM
  uint8_t *codes = nullptr, *activations = nullptr, *scales = nullptr;
  PROBE_CHECK(cudaMalloc(&codes, code_bytes));
  PROBE_CHECK(cudaMalloc(&activations, kActivationBlocks * 64 * 128));
  PROBE_CHECK(cudaMalloc(&scales, 64 * 128));
  fill_words<<<1024, 256>>>(reinterpret_cast<uint32_t*>(codes), code_bytes / 4, 1, false);
  fill_words<<<64, 256>>>(reinterpret_cast<uint32_t*>(activations), kActivationBlocks * 64 * 32,
                          2, true);
  fill_words<<<8, 256>>>(reinterpret_cast<uint32_t*>(scales), 64 * 32, 3, true);
  PROBE_CHECK(cudaGetLastError());
  std::vector<StreamRow> stream_rows;
  auto stream = [&](auto width, int w, int stages, int cw, int ca, int form) {
    constexpr int kN = decltype(width)::value;
    stream_rows.push_back(measure_stream<kN>(w, stages, cw, ca, form, sms, codes, activations,
                                             scales, kStreamBlocks, sink, cycles));
  };
  const std::integral_constant<int, 16> n16;
  const std::integral_constant<int, 32> n32;
  // stream3 first: scripts/device_wgmma_probe.sh profiles its first launch (32 tokens, 2 blocks
  // a stage).
  for (int stages : {4, 6}) {
    stream_rows.push_back(measure_stream3<32, 2>(stages, sms, codes, activations, scales,
                                                 kStreamBlocks, sink, cycles));
    stream_rows.push_back(measure_stream3<32, 1>(2 * stages, sms, codes, activations, scales,
                                                 kStreamBlocks, sink, cycles));
    stream_rows.push_back(measure_stream3<16, 2>(stages, sms, codes, activations, scales,
                                                 kStreamBlocks, sink, cycles));
    stream_rows.push_back(measure_stream3<64, 2>(stages - 1, sms, codes, activations, scales,
                                                 kStreamBlocks, sink, cycles));
    stream_rows.push_back(measure_stream3<64, 1>(2 * stages - 2, sms, codes, activations, scales,
                                                 kStreamBlocks, sink, cycles));
  }
  for (int w : {4, 3, 6}) {
    stream_rows.push_back(measure_stream2<32, 1>(w, 4, sms, codes, activations, scales,
                                                 kStreamBlocks, sink, cycles));
    stream_rows.push_back(measure_stream2<32, 2>(w, 3, sms, codes, activations, scales,
                                                 kStreamBlocks, sink, cycles));
    stream_rows.push_back(measure_stream2<16, 2>(w, 3, sms, codes, activations, scales,
                                                 kStreamBlocks, sink, cycles));
    stream_rows.push_back(measure_stream2<64, 2>(w, 2, sms, codes, activations, scales,
                                                 kStreamBlocks, sink, cycles));
  }
  for (int form : {0, 2, 3}) {
    stream(n16, 4, 4, 1, 1, form);
    stream(n32, 4, 4, 1, 1, form);
    stream(n32, 6, 4, 1, 1, form);
    stream(n32, 4, 4, 0, 0, form);
  }
  std::printf("%s, %d SMs. SM cycles per 64 x 64 block (all of one SM's blocks of an\n"
              "iteration); 122 = what 4.4 TB/s of int4 weights needs at 1.98 GHz. 'units' =\n"
              "warpgroups (wgmma) or warps (mma-dq) per SM; tensor%% = the block's FMAs over 2048\n"
              "a cycle (dense bf16 peak per SM).\n",
              prop.name, sms);
  std::printf("%-7s %4s %6s %5s %12s %9s %8s\n", "form", "N", "units", "regs", "cyc/block",
              "x122", "tensor%");
  for (const Row& r : rows) {
    const int units = r.form == Form::kMmaDequant ? 4 * r.warpgroups : r.warpgroups;
    if (r.skipped != nullptr) {
      std::printf("%-7s %4d %6d %5d %12s (%s)\n", form_name(r.form), r.n, units, r.registers,
                  "-", r.skipped);
      continue;
    }
    const double tensor = 100.0 * (64.0 * 64.0 * r.n / 2048.0) / r.cycles_per_block;
    std::printf("%-7s %4d %6d %5d %12.1f %9.2f %8.1f\n", form_name(r.form), r.n, units,
                r.registers, r.cycles_per_block, r.cycles_per_block / 122.0, tensor);
  }
  std::printf("\nstream: warpgroup rings fed by bulk copies (weights cold from DRAM, activations\n"
              "from L2); cycles per block per SM; 'w a' = weight and activation copies issued;\n"
              "issue 11 and 12 = stream2, one or two blocks a stage (issue form 2); 21 and 22\n"
              "= stream3 (a producer warp, 4 consumer warpgroups sharing the activations), one or\n"
              "two blocks a stage.\n");
  std::printf("%5s %4s %4s %7s %4s %12s %9s\n", "issue", "N", "wg", "stages", "w a", "cyc/block",
              "x122");
  for (const StreamRow& r : stream_rows) {
    if (r.cycles_per_block == 0) {
      std::printf("%5d %4d %4d %7d %2d%2d  (does not fit)\n", r.issue_form, r.n, r.warpgroups,
                  r.stages, r.copy_weights, r.copy_activations);
      continue;
    }
    std::printf("%5d %4d %4d %7d %2d%2d %12.1f %9.2f\n", r.issue_form, r.n, r.warpgroups, r.stages,
                r.copy_weights, r.copy_activations, r.cycles_per_block, r.cycles_per_block / 122.0);
  }
  PROBE_CHECK(cudaFree(codes));
  PROBE_CHECK(cudaFree(activations));
  PROBE_CHECK(cudaFree(scales));
  PROBE_CHECK(cudaFree(sink));
  PROBE_CHECK(cudaFree(cycles));
  return 0;
}
