// Thread-block clusters (sm_90): the barrier across a cluster's CTAs and reads of another CTA's
// shared memory (distributed shared memory). The decode tier's split CTAs of one strip form a
// cluster and sum their partial tiles through it, instead of a second kernel over a workspace.
//
// Rules the callers keep:
//   - cluster_sync() is executed by every thread of every CTA in the cluster (the .aligned forms
//     also need every lane of a warp at the same instruction);
//   - a CTA must not exit while another CTA may still read its shared memory: end with a
//     cluster_sync() after the last remote read.
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

#endif

}  // namespace sailfish::gpu
