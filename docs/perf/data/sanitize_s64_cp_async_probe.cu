// Does compute-sanitizer's racecheck see cp.async writes into shared memory? (stop 64)
//
// The decode kernels fill their stages with cp.async and other lanes read them after
// cp.async.wait_group and __syncwarp; racecheck reported no hazard on them. That result means
// something only if racecheck tracks the copies' writes. Two one-warp kernels tell:
//   racy:   lane 0 copies 16 bytes into shared memory and commits, but nobody waits before lane 1
//           reads them after a __syncwarp: a read-after-write hazard racecheck should report;
//   synced: the same with cp.async.wait_group 0 before the __syncwarp: no hazard.
//   nvcc -O3 -arch=sm_90a sanitize_s64_cp_async_probe.cu -o probe
//   compute-sanitizer --tool racecheck ./probe racy; compute-sanitizer --tool racecheck ./probe synced
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

__global__ void copy_then_read(const int4* src, int* out, bool wait) {
  __shared__ __align__(16) int4 slot;
  const unsigned lane = threadIdx.x;
  if (lane == 0) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&slot));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    if (wait) asm volatile("cp.async.wait_group 0;\n" ::: "memory");
  }
  __syncwarp();
  if (lane == 1) out[0] = slot.x;
  if (lane == 0 && !wait) asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "racy") != 0 && std::strcmp(argv[1], "synced") != 0)) {
    std::fprintf(stderr, "usage: %s racy|synced\n", argv[0]);
    return 2;
  }
  const bool wait = std::strcmp(argv[1], "synced") == 0;
  int4* src = nullptr;
  int* out = nullptr;
  if (cudaMalloc(&src, sizeof(int4)) != cudaSuccess || cudaMalloc(&out, sizeof(int)) != cudaSuccess ||
      cudaMemset(src, 0, sizeof(int4)) != cudaSuccess) {
    std::fprintf(stderr, "allocation failed\n");
    return 1;
  }
  copy_then_read<<<1, 32>>>(src, out, wait);
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("%s: %s\n", argv[1], cudaGetErrorString(e));
  cudaFree(src);
  cudaFree(out);
  return e == cudaSuccess ? 0 : 1;
}
