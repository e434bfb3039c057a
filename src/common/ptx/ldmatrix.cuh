// ldmatrix (sm_75+): four 8 x 8 matrices of 16-bit elements from shared memory, each lane
// receiving the elements of mma fragment order. Lane L supplies the address of row L % 8 of
// matrix L / 8; result register q holds matrix q's elements (row lane / 4, columns 2 (lane % 4)
// and + 1).
#pragma once

#include <cstdint>

namespace sailfish::gpu {

__device__ __forceinline__ void ldmatrix_x4(uint32_t address, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// ldmatrix_x4 at address + kOffset, the constant folded into the instruction ([reg + imm]).
template <int kOffset>
__device__ __forceinline__ void ldmatrix_x4_at(uint32_t address, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4+%5];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address), "n"(kOffset));
}

}  // namespace sailfish::gpu
