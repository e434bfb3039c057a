// sailfish_dequant_bench: bandwidth of the dense tier's dequantization kernel against a plain
// device-to-device copy measured in the same run (issue target: packed-read + dequantized-write
// bytes at >= 85% of the copy bandwidth).
//
// Method (DESIGN.md): random packed weights (every byte pattern is a valid code) rotated over
// enough copies to exceed 3x L2, a CUDA graph of 20 calls, median of 7 replays. Bytes counted per
// call: packed codes + scales (read) + n_pad * k_pad * 2 (written). The copy moves 2 GiB with a
// kernel with 16-byte accesses; its bandwidth counts bytes read + written.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "sailfish/sailfish.h"

namespace {

#define CHECK_CUDA(call)                                                                  \
  do {                                                                                    \
    cudaError_t e = (call);                                                               \
    if (e != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e));              \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

__global__ void fill_random(uint32_t* data, size_t words, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words;
       i += size_t(gridDim.x) * blockDim.x) {
    uint32_t x = uint32_t(i) * 2654435761u ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    data[i] = x;
  }
}

// Scales: small positive bf16 values (0x3c00..0x3cff ~ 0.0078..0.0156), never zero or NaN.
__global__ void fill_scales(uint16_t* data, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    data[i] = static_cast<uint16_t>(0x3c00u | (i * 37u & 0xffu));
  }
}

// The copy reference: 16-byte loads and stores, grid-stride, like the dequantization kernel's
// own accesses (cudaMemcpyAsync between device buffers measured well below this on the H200).
__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

template <typename F>
float median_us_per_call(F&& enqueue, int calls, cudaStream_t stream) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < calls; ++i) enqueue(i, stream);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaGraphLaunch(exec, stream));  // warm-up
  std::vector<float> ms;
  for (int r = 0; r < 7; ++r) {
    CHECK_CUDA(cudaEventRecord(start, stream));
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  return ms[ms.size() / 2] * 1000.0f / calls;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: nothing to benchmark\n");
    return 2;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // Copy bandwidth: 1 GiB read + 1 GiB written per call.
  const size_t copy_bytes = size_t(1) << 30;
  void *src = nullptr, *dst = nullptr;
  CHECK_CUDA(cudaMalloc(&src, copy_bytes));
  CHECK_CUDA(cudaMalloc(&dst, copy_bytes));
  fill_random<<<1024, 256, 0, stream>>>(static_cast<uint32_t*>(src), copy_bytes / 4, 7);
  const float copy_us = median_us_per_call(
      [&](int, cudaStream_t s) {
        copy_kernel<<<prop.multiProcessorCount * 16, 256, 0, s>>>(
            static_cast<const uint4*>(src), static_cast<uint4*>(dst), copy_bytes / 16);
      },
      5, stream);
  const double copy_tbps = 2.0 * copy_bytes / (copy_us * 1e-6) / 1e12;
  CHECK_CUDA(cudaFree(src));
  CHECK_CUDA(cudaFree(dst));
  std::printf("device %s, copy bandwidth %.3f TB/s (read + write)\n", prop.name, copy_tbps);

  struct Shape {
    const char* name;
    int64_t k, n;
  };
  const Shape shapes[] = {{"l3-8b.qkv", 4096, 6144},    {"l3-8b.o", 4096, 4096},
                          {"l3-8b.gate_up", 4096, 28672}, {"l3-8b.down", 14336, 4096},
                          {"l3-70b.qkv", 8192, 10240},  {"l3-70b.o", 8192, 8192},
                          {"l3-70b.gate_up", 8192, 57344}, {"l3-70b.down", 28672, 8192}};
  std::printf("%-16s %5s %10s %10s %10s %8s\n", "shape", "bits", "us", "bytes(MB)", "TB/s",
              "%copy");
  for (int bits : {4, 8}) {
    for (const Shape& shape : shapes) {
      sailfish::PackedGeometry geo;
      if (!sailfish::PackedGeometry::make(shape.n, shape.k, bits, 128, &geo).ok()) return 1;
      const size_t code_bytes = static_cast<size_t>(geo.code_bytes());
      const size_t scale_bytes = static_cast<size_t>(geo.scale_rows * geo.n_pad) * 2;
      const size_t out_bytes = static_cast<size_t>(geo.n_pad * geo.k_pad) * 2;
      const int copies = static_cast<int>(std::max<size_t>(
          1, (3 * size_t(prop.l2CacheSize)) / (code_bytes + scale_bytes + out_bytes) + 1));
      // The outputs rotate too, so small layers do not write into a buffer L2 already holds.
      std::vector<void*> codes(copies), scales(copies), outs(copies);
      for (int c = 0; c < copies; ++c) {
        CHECK_CUDA(cudaMalloc(&outs[c], out_bytes));
        CHECK_CUDA(cudaMalloc(&codes[c], code_bytes));
        CHECK_CUDA(cudaMalloc(&scales[c], scale_bytes));
        fill_random<<<1024, 256, 0, stream>>>(static_cast<uint32_t*>(codes[c]), code_bytes / 4,
                                              c + 1);
        fill_scales<<<256, 256, 0, stream>>>(static_cast<uint16_t*>(scales[c]), scale_bytes / 2);
      }
      const float us = median_us_per_call(
          [&](int i, cudaStream_t s) {
            sailfish::DeviceWeight w;
            w.geometry = geo;
            w.scale_dtype = sailfish::DType::kBF16;
            w.codes = codes[i % copies];
            w.scales = scales[i % copies];
            const sailfish::Status st = sailfish::dequantize(w, outs[i % copies], geo.k_pad, s);
            if (!st.ok()) {
              std::fprintf(stderr, "dequantize: %s\n", st.to_string().c_str());
              std::exit(1);
            }
          },
          std::max(20, copies), stream);
      const double bytes = double(code_bytes + scale_bytes + out_bytes);
      const double tbps = bytes / (us * 1e-6) / 1e12;
      std::printf("%-16s %5d %10.1f %10.1f %10.3f %7.1f%%\n", shape.name, bits, us, bytes / 1e6,
                  tbps, 100.0 * tbps / copy_tbps);
      for (int c = 0; c < copies; ++c) {
        CHECK_CUDA(cudaFree(outs[c]));
        CHECK_CUDA(cudaFree(codes[c]));
        CHECK_CUDA(cudaFree(scales[c]));
      }
    }
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
  return 0;
}
