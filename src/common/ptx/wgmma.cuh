// wgmma (sm_90a): warpgroup-wide asynchronous tensor-core MMA, and the register-count handoff
// between warp-specialized warpgroups.
//
// Two forms are wrapped, fp32 accumulators in registers and B (activations) from shared memory
// through a matrix descriptor in both: A (weights) from registers (WgmmaRs, the prefill tier's),
// and A from shared memory (WgmmaSs, measured against it by bench/wgmma_probe). The per-width
// wrappers are generated (wgmma_rs.inc, wgmma_ss.inc; scripts/codegen/gen_wgmma.py) because
// inline asm needs one operand per accumulator register.
//
// Ordering rules the callers follow (PTX ISA, "wgmma.mma_async"):
//   - fence() before the first wgmma that reads registers written since the last fence (the A
//     fragments and, after an epilogue, the zeroed accumulators);
//   - commit() closes a group of wgmmas; wait<N>() returns when at most N groups are in flight.
//     Registers a wgmma reads (A) or writes (D) must not be touched until its group completes.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace sailfish::gpu {

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SAILFISH_HAS_WGMMA 1
#else
#define SAILFISH_HAS_WGMMA 0
#endif

template <typename T, int kN>
struct WgmmaRs;
template <typename T, int kN>
struct WgmmaSs;

#if SAILFISH_HAS_WGMMA
#include "common/ptx/wgmma_rs.inc"
#include "common/ptx/wgmma_ss.inc"

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving accesses to an accumulator register across a wgmma fence, commit
// or wait (it cannot see that the asynchronous MMA still owns the register).
__device__ __forceinline__ void fence_register(float& r) { asm volatile("" : "+f"(r)::"memory"); }
__device__ __forceinline__ void fence_register(uint32_t& r) {
  asm volatile("" : "+r"(r)::"memory");
}

// Warp-specialized register budgets: the producer warpgroup gives registers back, the consumers
// take them (all warps of a warpgroup execute the same instruction).
template <int kRegisters>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
#endif  // SAILFISH_HAS_WGMMA

// Shared-memory matrix descriptor for a K-major operand tile written by TMA with the 128-byte
// swizzle: rows of 64 16-bit elements (128 bytes), 8-row swizzle atoms 1024 bytes apart (the
// stride byte offset); the leading byte offset is unused by swizzled K-major layouts (set to 1
// by convention). The tile base must be 1024-byte aligned; a k16 step inside the 64-wide atom
// advances the start address by 32 bytes, and the hardware applies the swizzle on the address.
__host__ __device__ constexpr uint64_t smem_descriptor_k_major_sw128(uint32_t shared_address) {
  return (uint64_t((shared_address & 0x3FFFF) >> 4)) |  // start address, 16-byte units
         (uint64_t(1) << 16) |                          // leading byte offset (16 B, unused)
         (uint64_t(1024 >> 4) << 32) |                  // stride byte offset: 8 rows x 128 B
         (uint64_t(1) << 62);                           // layout: 128-byte swizzle
}

}  // namespace sailfish::gpu
