// cp.async (sm_80+): asynchronous global -> shared copies that wait in the async queue and cost
// no registers while in flight.
#pragma once

#include <cstdint>

namespace sailfish::gpu {

__device__ __forceinline__ uint32_t shared_address(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

// 16 bytes, bypassing L1 (.cg: weights are read once). src_bytes < 16 zero-fills the rest
// (src_bytes = 0 reads nothing, so src may then point anywhere valid-looking but is not touched).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes = 16) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}

// cp_async_16 issued only where `issue` holds, as one predicated instruction rather than a branch:
// in the SASS, ptxas puts three no-op loads before every cp.async that follows a branch, and the
// decode mainloop is bound by its instruction stream (docs/perf/decode.md, v7).
__device__ __forceinline__ void cp_async_16_if(bool issue, uint32_t dst, const void* src,
                                               int src_bytes = 16) {
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %0, 0;\n"
      "  @p cp.async.cg.shared.global [%1], [%2], 16, %3;\n"
      "}\n" ::"r"(static_cast<int>(issue)),
      "r"(dst), "l"(src), "r"(src_bytes)
      : "memory");
}

// cp_async_16_if at dst + kOffset from src + kOffset, the offset folded into both addresses
// ([reg + imm]): ptxas does not fold a constant added to the shared address itself, and spent one
// integer add per copy on it (the decode weight runs: 4 or 8 copies per block).
template <int kOffset>
__device__ __forceinline__ void cp_async_16_if_at(bool issue, uint32_t dst, const void* src) {
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %0, 0;\n"
      "  @p cp.async.cg.shared.global [%1+%3], [%2+%3], 16;\n"
      "}\n" ::"r"(static_cast<int>(issue)),
      "r"(dst), "l"(src), "n"(kOffset)
      : "memory");
}

// cp_async_16_if_at with an L2 cache policy (createpolicy_evict_first, sm_80+).
template <int kOffset>
__device__ __forceinline__ void cp_async_16_if_at_hint(bool issue, uint32_t dst, const void* src,
                                                       uint64_t policy) {
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %0, 0;\n"
      "  @p cp.async.cg.shared.global.L2::cache_hint [%1+%3], [%2+%3], 16, %4;\n"
      "}\n" ::"r"(static_cast<int>(issue)),
      "r"(dst), "l"(src), "n"(kOffset), "l"(policy)
      : "memory");
}

// An L2 policy that makes the lines a load brings in the first to be evicted: for bytes read
// once, such as the decode tier's weight stream, so they do not push out what is read again.
__device__ __forceinline__ uint64_t createpolicy_evict_first() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// An arrival on the mbarrier at `bar` once every cp.async this thread issued before it has
// landed (sm_80+). noinc: the arrival counts against the barrier's expected count, so a barrier
// that 128 threads complete this way is initialized with 128.
__device__ __forceinline__ void cp_async_arrive_noinc(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most `pending` of this thread's commit groups are still in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}

}  // namespace sailfish::gpu
