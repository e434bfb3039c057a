// The floor kernel: it only streams bytes. Launched on a weight copy exactly as a Sailfish call is
// (same graph size, same rotation, and programmatic dependent launch where the row's plan uses
// it), its time is what launch and ramp latency plus the memory system allow for those bytes; a
// GEMM's ratio to it is the part that is the kernel's own inefficiency. The same kernel over a few
// GiB measures the streaming-read bandwidth of the roofline.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "device_buffer.h"

namespace sailfish::bench {

// How the floor loads its bytes: read-only 16-byte loads, plain or with an L2 evict-first policy
// (the policy Sailfish's decode tier puts on its weight copies at 1-2 token tiles). A row's floor
// is the faster of the two (docs/BENCH.md).
enum class FloorLoads { kReadOnly, kReadOnlyEvictFirst };
constexpr FloorLoads kFloorLoadForms[] = {FloorLoads::kReadOnly, FloorLoads::kReadOnlyEvictFirst};
const char* floor_loads_name(FloorLoads loads);  // "nc", "nc-evict-first"

struct FloorLaunch {
  FloorLoads loads = FloorLoads::kReadOnly;
  // Launched with the programmatic-stream-serialization attribute: the loads are issued before
  // griddepcontrol.wait, the (never taken) store after it, as a Sailfish decode kernel issues its
  // weight copies before waiting for the previous kernel.
  bool programmatic_dependent_launch = false;
};

class StreamReader {
 public:
  Status init();
  // Reads [data, data + bytes) with 16-byte loads. data 16-byte aligned, bytes a multiple of 16.
  Status launch(const void* data, size_t bytes, cudaStream_t stream, FloorLaunch how = {}) const;

 private:
  DeviceBuffer sink_;  // written only when the checksum hits a magic value: keeps loads alive
};

}  // namespace sailfish::bench
