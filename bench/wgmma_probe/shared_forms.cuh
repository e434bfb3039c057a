// sailfish_wgmma_probe, the forms with every operand already in shared memory (rs, ss, rs-dq,
// ss-dq, mma-dq, mma-nc; wgmma_probe.cu describes them): one kernel, probe_kernel, that loops over
// one 64 x 64 block's tensor work `iterations` times, and its measurement over 1 .. max_threads /
// 128 warpgroups a CTA.
#pragma once

#include "common/ptx/fence_proxy.cuh"
#include "common/ptx/ldmatrix.cuh"
#include "common/ptx/mma_sync.cuh"
#include "common/ptx/named_barrier.cuh"
#include "common/ptx/stmatrix.cuh"
#include "probe_common.cuh"

namespace sailfish::probe {

enum class Form { kRs, kSs, kRsDequant, kSsDequant, kMmaDequant, kMmaNoConversion };
// The forms built on the decode tier's warp-split step (one warp a block, mma.sync).
__host__ __device__ constexpr bool is_mma_sync(Form f) {
  return f == Form::kMmaDequant || f == Form::kMmaNoConversion;
}
inline const char* form_name(Form f) {
  switch (f) {
    case Form::kRs: return "rs";
    case Form::kSs: return "ss";
    case Form::kRsDequant: return "rs-dq";
    case Form::kSsDequant: return "ss-dq";
    case Form::kMmaDequant: return "mma-dq";
    case Form::kMmaNoConversion: return "mma-nc";
  }
  return "?";
}

// Per warpgroup: [B tile (activations, n x 128 B)] [two A tiles] [two 2 KB code areas];
// mma-dq per warp: [activations, n x 128 B] [two 2 KB code areas].
__host__ __device__ constexpr int region_bytes(Form f, int n) {
  return is_mma_sync(f) ? b_tile_bytes(n) + 2 * kBlockBytes
                        : b_tile_bytes(n) + 2 * kATileBytes + 2 * kBlockBytes;
}
__host__ __device__ constexpr int regions_per_cta(Form f, int warpgroups) {
  return is_mma_sync(f) ? 4 * warpgroups : warpgroups;
}
// The launch bound, so that ptxas gives each instance the registers its accumulators need:
// 256-token wgmma holds 128 accumulators a thread (two warpgroups at most), 128-token 64 (three:
// at four ptxas serialized the wgmmas); mma-dq at 8 tokens and rs-dq at 16 run up to 6
// warpgroups (24 warps), everything else up to 4 (mma-dq at 16 tokens spilled 24 bytes in the 80
// registers of 6).
__host__ __device__ constexpr int max_threads(Form f, int n) {
  return is_mma_sync(f) || (f == Form::kRsDequant && n <= 32)
             ? (n <= (is_mma_sync(f) ? 8 : 16) ? 768 : 512)
             : n == 256 ? 256 : n == 128 ? 384 : 512;
}

template <Form kForm, int kN>
__global__ void __launch_bounds__(max_threads(kForm, kN), 1)
    probe_kernel(int iterations, float* sink, long long* cycles) {
#if SAILFISH_HAS_WGMMA
  extern __shared__ __align__(16) uint8_t smem_raw[];
  uint32_t base = 0;
  uint8_t* const smem = aligned_shared(smem_raw, &base);
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
  const int region = is_mma_sync(kForm) ? warp : warpgroup;
  const uint32_t region_address = base + region * kRegion;
  const uint32_t b_tile = region_address;
  const uint32_t a_tiles = region_address + b_tile_bytes(kN);
  const uint32_t codes = region_address + kRegion - 2 * kBlockBytes;
  float result = 0.0f;
  long long start = 0, stop = 0;

  if constexpr (is_mma_sync(kForm)) {
    // mma-nc: the loaded words are the A fragments as they are, no conversion: what the loop's
    // shared loads, ldmatrix and mma cost alone (the tensor pipe's share of mma-dq). No form
    // keeps the conversion without the mma: ptxas drops fragments nothing reads, and any reader
    // (a fold into one register, a store) would add to the ALU or the shared-memory pipe.
    constexpr bool kConvert = kForm == Form::kMmaDequant;
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
            if constexpr (!kConvert) {
#pragma unroll
              for (int r = 0; r < 4; ++r) a[r] = words[j][r];  // the loaded quad: no moves
            } else if constexpr (kOffsetForm) {
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

}  // namespace sailfish::probe
