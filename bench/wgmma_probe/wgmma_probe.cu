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
//   mma-nc  mma-dq without the conversion, the loaded words used as the fragments: what its
//           shared loads, ldmatrix and mma.sync alone cost (the tensor pipe's share).
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
#include <cuda_runtime.h>

#include <cstdio>
#include <type_traits>
#include <vector>

#include "probe_common.cuh"
#include "shared_forms.cuh"
#include "stream_forms.cuh"

using namespace sailfish::probe;

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
  measure_widths<Form::kMmaNoConversion, 8, 16, 32>(&rows, sms, sink, cycles);

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
              "warpgroups (wgmma) or warps (mma-dq, mma-nc) per SM; tensor%% = the block's FMAs over 2048\n"
              "a cycle (dense bf16 peak per SM).\n",
              prop.name, sms);
  std::printf("%-7s %4s %6s %5s %12s %9s %8s\n", "form", "N", "units", "regs", "cyc/block",
              "x122", "tensor%");
  for (const Row& r : rows) {
    const int units = is_mma_sync(r.form) ? 4 * r.warpgroups : r.warpgroups;
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
