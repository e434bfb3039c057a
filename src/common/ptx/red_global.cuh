// red.global.add (no return value) of packed or single fp16 / bf16 values. Emitted through
// PTX because atomicAdd on a half2 may compile to a compare-and-swap loop. .noftz keeps
// subnormals.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace sailfish::gpu {

__device__ __forceinline__ void red_add_pair(__half2* address, __half2 value) {
  asm volatile("red.global.add.noftz.f16x2 [%0], %1;\n" ::"l"(address),
               "r"(*reinterpret_cast<const unsigned*>(&value))
               : "memory");
}
// bf16 red.global needs sm_90; Ampere and Ada builds (the decode tier compiles for them too)
// fall back to atomicAdd, which there may be a compare-and-swap loop.
__device__ __forceinline__ void red_add_pair(__nv_bfloat162* address, __nv_bfloat162 value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.noftz.bf16x2 [%0], %1;\n" ::"l"(address),
               "r"(*reinterpret_cast<const unsigned*>(&value))
               : "memory");
#else
  atomicAdd(address, value);
#endif
}
__device__ __forceinline__ void red_add(__half* address, __half value) {
  asm volatile("red.global.add.noftz.f16 [%0], %1;\n" ::"l"(address),
               "h"(*reinterpret_cast<const unsigned short*>(&value))
               : "memory");
}
__device__ __forceinline__ void red_add(__nv_bfloat16* address, __nv_bfloat16 value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.noftz.bf16 [%0], %1;\n" ::"l"(address),
               "h"(*reinterpret_cast<const unsigned short*>(&value))
               : "memory");
#else
  atomicAdd(address, value);
#endif
}

}  // namespace sailfish::gpu
