// Kernel launch with an optional programmatic-dependent-launch attribute (Hopper): the kernel may
// begin (load weights, which no earlier kernel writes) while the previous kernel drains; it calls
// gpu::wait_for_previous_grid() before touching anything an earlier kernel produced. Optionally
// in thread-block clusters (sm_90).
#pragma once

#include <cuda_runtime.h>

#include "common/cuda_check.h"

namespace sailfish::gpu {

// cluster: the thread-block cluster shape (sm_90), or (1, 1, 1) for no cluster attribute.
template <typename... KernelArgs, typename... Args>
Status launch_in_clusters(void (*kernel)(KernelArgs...), dim3 grid, dim3 cluster, dim3 block,
                          size_t shared_bytes, cudaStream_t stream,
                          bool programmatic_dependent_launch, const char* what, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute attributes[2];
  unsigned count = 0;
  if (programmatic_dependent_launch) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  if (cluster.x * cluster.y * cluster.z > 1) {
    attributes[count].id = cudaLaunchAttributeClusterDimension;
    attributes[count].val.clusterDim.x = cluster.x;
    attributes[count].val.clusterDim.y = cluster.y;
    attributes[count].val.clusterDim.z = cluster.z;
    ++count;
  }
  config.attrs = attributes;
  config.numAttrs = count;
  SF_RETURN_IF_ERROR(
      detail::cuda_status(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), what));
  return Status();
}

template <typename... KernelArgs, typename... Args>
Status launch(void (*kernel)(KernelArgs...), dim3 grid, dim3 block, size_t shared_bytes,
              cudaStream_t stream, bool programmatic_dependent_launch, const char* what,
              Args&&... args) {
  return launch_in_clusters(kernel, grid, dim3(1, 1, 1), block, shared_bytes, stream,
                            programmatic_dependent_launch, what, std::forward<Args>(args)...);
}

}  // namespace sailfish::gpu
