// MoE on the device (docs/MOE.md). The align step runs from routing the router left on the device,
// so a layer needs no host synchronization and can be captured in a CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "sailfish/moe.h"
#include "sailfish/status.h"

namespace sailfish {

// Device-resident routing: MoeRouting's fields as device pointers (int32 ids, float weights).
struct DeviceMoeRouting {
  int64_t tokens = 0;
  int top_k = 0;
  int experts = 0;                      // global expert count
  int local_experts = 0;                // this rank's (== experts without a map)
  const int32_t* topk_ids = nullptr;    // [tokens][top_k]
  const float* topk_weights = nullptr;  // [tokens][top_k] (the GEMM's epilogue reads them)
  const int32_t* expert_map = nullptr;  // [experts] local index or -1, or null: every expert local
};

// Writes moe_align's arrays for `routing` into `buffer` at `layout`'s offsets (a layout made for
// the routing's tokens, top_k and local experts and for block_rows): the same values moe_align
// computes on the host (choice_slots included), with block_experts -1 and sorted_rows -1 past the
// blocks made, and the counters (MoeAlignCounter). An invalid choice's slot is -1. A choice whose id lies outside [0, experts), or whose map entry
// outside [-1, local_experts), is skipped and counted in counters[kMoeInvalidChoices]; nothing is
// read or written out of bounds. Enqueued on stream: no allocation, no synchronization. One CTA
// does the work, in time linear in tokens * top_k (built for decode-sized layers).
Status moe_align_on_device(const DeviceMoeRouting& routing, const MoeAlignLayout& layout,
                           void* buffer, size_t buffer_bytes, cudaStream_t stream);

}  // namespace sailfish
