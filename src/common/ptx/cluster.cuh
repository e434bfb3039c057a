// Thread-block clusters (sm_90): the barrier across a cluster's CTAs and reads of another CTA's
// shared memory (distributed shared memory). The decode tier's split CTAs of one strip form a
// cluster and sum their partial tiles through it, instead of a second kernel over a workspace.
//
// Rules the callers keep:
//   - cluster_sync(), and cluster_arrive_relaxed() then cluster_wait(), are executed by every
//     thread of every CTA in the cluster (the .aligned forms also need every lane of a warp at the
//     same instruction);
//   - a CTA must not exit while another CTA may still read its shared memory: end with a
//     cluster_sync() after the last remote read. A CTA that only writes another's shared memory
//     (store_async_to_rank) may exit once its stores are issued; the receiver waits on its
//     mbarrier.
#pragma once

#include <cstdint>

namespace sailfish::gpu {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

// Arrive with release semantics and wait with acquire: shared-memory writes before the barrier
// are visible to every CTA of the cluster after it.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}

// The two halves of cluster_sync(), for work in between: arrive (no ordering of its own: pair it
// with a fence such as fence_barrier_init() for what must be visible) and wait (acquire).
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
}

// The address, in the cluster's shared window, of `address` (a shared::cta address of this CTA)
// in the CTA of cluster rank `rank`.
__device__ __forceinline__ uint32_t map_shared_to_rank(uint32_t address, uint32_t rank) {
  uint32_t mapped;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(mapped) : "r"(address), "r"(rank));
  return mapped;
}

// volatile keeps the loads after cluster_sync() (its memory clobber orders them); with no clobber
// of their own the compiler may still issue them back to back before the adds that use them.
__device__ __forceinline__ float load_shared_cluster(uint32_t address) {
  float value;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(value) : "r"(address));
  return value;
}

// 16 bytes to another CTA's shared memory (`address` and `barrier` from map_shared_to_rank;
// address 16-byte aligned), completing 16 transaction bytes on that CTA's mbarrier: the receiver
// sets the bytes it expects (mbarrier_arrive_expect_tx) and waits with cluster scope
// (mbarrier_wait_cluster). The values come from registers, so nothing of the sender's must stay.
__device__ __forceinline__ void store_async_to_rank(uint32_t address, const float (&v)[4],
                                                    uint32_t barrier) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, "
      "[%5];\n" ::"r"(address),
      "r"(__float_as_uint(v[0])), "r"(__float_as_uint(v[1])), "r"(__float_as_uint(v[2])),
      "r"(__float_as_uint(v[3])), "r"(barrier)
      : "memory");
}

#endif

}  // namespace sailfish::gpu
