// griddepcontrol (sm_90): programmatic dependent launch. A kernel launched with the
// programmatic-stream-serialization attribute may start while the previous kernel in the stream
// is still running; `wait` blocks until that kernel has finished and its memory is visible, and
// `launch_dependents` lets the next kernel start launching. Both are no-ops for a kernel launched
// without the attribute, and compile to nothing before sm_90.
#pragma once

namespace sailfish::gpu {

__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void allow_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

}  // namespace sailfish::gpu
