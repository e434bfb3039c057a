// fence.proxy.async (sm_90): orders this thread's ordinary (generic-proxy) shared-memory writes
// before later reads by the async proxy, which wgmma's shared-memory operands and TMA use. A
// warpgroup that writes a wgmma operand tile with st.shared or stmatrix fences, then meets at a
// barrier, then issues the wgmma.
#pragma once

namespace sailfish::gpu {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
#endif

}  // namespace sailfish::gpu
