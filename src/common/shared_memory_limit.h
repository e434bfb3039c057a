// A kernel's dynamic shared-memory limit (cudaFuncAttributeMaxDynamicSharedMemorySize), raised
// once per (kernel, device) instead of on every launch: the attribute call is a driver round trip
// on the launch path, and the launchers run once per layer per token.
#pragma once

#include "sailfish/status.h"

namespace sailfish::gpu {

// Ensures `kernel` (a __global__ function's address) may be launched on the current device with
// up to `bytes` of dynamic shared memory. Thread-safe. The record of what was raised lives for the
// process: after cudaDeviceReset() it is stale, and a launch needing more than 48 KB then fails
// with a CUDA error rather than silently.
Status raise_shared_memory_limit(const void* kernel, int bytes);

}  // namespace sailfish::gpu
