// Kernel launch with an optional programmatic-dependent-launch attribute (Hopper): the kernel may
// begin (load weights, which no earlier kernel writes) while the previous kernel drains; it calls
// gpu::wait_for_previous_grid() before touching anything an earlier kernel produced.
#pragma once

#include <cuda_runtime.h>

#include "common/cuda_check.h"

namespace sailfish::gpu {

template <typename... KernelArgs, typename... Args>
Status launch(void (*kernel)(KernelArgs...), dim3 grid, dim3 block, size_t shared_bytes,
              cudaStream_t stream, bool programmatic_dependent_launch, const char* what,
              Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = programmatic_dependent_launch ? 1 : 0;
  SF_RETURN_IF_ERROR(
      detail::cuda_status(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), what));
  return Status();
}

}  // namespace sailfish::gpu
