// stmatrix (sm_90): the inverse of ldmatrix. Four 8 x 8 matrices of 16-bit elements go from mma
// fragment registers to shared memory: lane L supplies the address of row L % 8 of matrix L / 8,
// and register q holds matrix q's elements of row lane / 4, columns 2 (lane % 4) and + 1.
#pragma once

#include <cstdint>

namespace sailfish::gpu {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void stmatrix_x4(uint32_t address, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(address),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}
#endif

}  // namespace sailfish::gpu
