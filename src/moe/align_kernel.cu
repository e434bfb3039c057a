// The MoE align step on the device (include/sailfish/moe_gpu.h): one CTA turns device-resident
// routing into moe_align's arrays, bit for bit. Counting sort in four phases:
//   0. every slot of the output padded (-1), the per-expert counts zeroed;
//   1. rows counted per local expert (shared-memory atomics: the counts do not depend on order);
//   2. a CTA-wide scan of each expert's whole blocks gives its first block; the block table and
//      row counts are written, and each count becomes the expert's next free slot;
//   3. one warp places the rows 32 at a time in ascending order, each lane ranked among the lanes
//      of the same expert (match.any), so every expert's rows land in ascending order: the same
//      arrays every run, whatever the timing; each row's slot (or -1) goes to choice_slots.
// Phase 3 is serial over warps of rows, which costs nothing at decode sizes (512 choice rows are
// 16 steps) and grows linearly with tokens * top_k.
// For a plan whose expert GEMM writes Y itself (MoePlan::fused_combine), phase 1 also zeroes the
// Y row of every choice that no block holds (an invalid id, or a map entry of -1), which no
// later kernel writes; plan_moe fuses the combine only where every expert is local, so these are
// rare and one thread a row is enough.
#include <cuda_runtime.h>

#include "common/cuda_check.h"
#include "common/launch.cuh"
#include "common/ptx/griddepcontrol.cuh"
#include "moe/align_step.h"
#include "sailfish/moe_gpu.h"

namespace sailfish {
namespace {

constexpr int kAlignThreads = 512;
constexpr int kAlignWarps = kAlignThreads / 32;

struct AlignArgs {
  const int32_t* topk_ids;
  const int32_t* expert_map;  // or null
  int32_t choices;
  int32_t experts;
  int32_t local_experts;
  int32_t block_rows;
  int32_t max_blocks;
  int32_t* sorted_rows;
  int32_t* block_experts;
  int32_t* expert_rows;
  int32_t* choice_slots;
  int32_t* counters;
  // The fused combine's Y ([choices][row_bytes]), whose rows of choices no block holds are
  // zeroed here; or null.
  uint8_t* y;
  int64_t y_row_bytes;
};

// Zeroes one row of Y, 16 bytes a store where the row is aligned (row_bytes is a multiple of 2).
__device__ void zero_row(uint8_t* row, int64_t row_bytes) {
  int64_t i = 0;
  if ((reinterpret_cast<uintptr_t>(row) & 15) == 0) {
    for (; i + 16 <= row_bytes; i += 16)
      *reinterpret_cast<uint4*>(row + i) = make_uint4(0, 0, 0, 0);
  }
  for (; i < row_bytes; i += 2) *reinterpret_cast<uint16_t*>(row + i) = 0;
}

// The local expert of a choice row, -1 when another rank holds it, -2 when the routing is out of
// range (counted, then skipped like a remote expert).
__device__ __forceinline__ int local_expert_of(const AlignArgs& args, int32_t row) {
  const int32_t e = args.topk_ids[row];
  if (e < 0 || e >= args.experts) return -2;
  const int32_t local = args.expert_map ? args.expert_map[e] : e;
  return local >= -1 && local < args.local_experts ? local : -2;
}

__global__ void __launch_bounds__(kAlignThreads) moe_align_kernel(AlignArgs args) {
  extern __shared__ int32_t expert_slot[];  // [local_experts]: count, then next free slot
  __shared__ int32_t warp_totals[kAlignWarps];
  __shared__ int32_t invalid_choices;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  // Under programmatic dependent launch: the routing comes from the kernel before, and that
  // kernel (a previous layer's) may still read this workspace; the next kernel's own wait holds it
  // until this grid is done, so it may launch now.
  gpu::wait_for_previous_grid();
  gpu::allow_next_grid();

  for (int l = tid; l < args.local_experts; l += kAlignThreads) expert_slot[l] = 0;
  if (tid == 0) invalid_choices = 0;
  const int64_t slots = int64_t(args.max_blocks) * args.block_rows;
  for (int64_t i = tid; i < slots; i += kAlignThreads) args.sorted_rows[i] = -1;
  for (int b = tid; b < args.max_blocks; b += kAlignThreads) args.block_experts[b] = -1;
  __syncthreads();

  for (int32_t row = tid; row < args.choices; row += kAlignThreads) {
    const int local = local_expert_of(args, row);
    if (local >= 0) atomicAdd(&expert_slot[local], 1);
    if (local == -2) atomicAdd(&invalid_choices, 1);
    if (local < 0 && args.y != nullptr) zero_row(args.y + row * args.y_row_bytes, args.y_row_bytes);
  }
  __syncthreads();

  // Each thread owns a run of consecutive experts; its run's blocks, scanned across the CTA.
  const int per_thread = (args.local_experts + kAlignThreads - 1) / kAlignThreads;
  const int first = tid * per_thread;
  const int last = min(first + per_thread, args.local_experts);
  int own_blocks = 0;
  for (int l = first; l < last; ++l) {
    own_blocks += (expert_slot[l] + args.block_rows - 1) / args.block_rows;
  }
  int inclusive = own_blocks;
  for (int offset = 1; offset < 32; offset *= 2) {
    const int below = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive += below;
  }
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  int warps_before = 0;
  for (int w = 0; w < warp; ++w) warps_before += warp_totals[w];
  int block = warps_before + inclusive - own_blocks;  // this run's first block
  for (int l = first; l < last; ++l) {
    const int rows = expert_slot[l];
    const int blocks = (rows + args.block_rows - 1) / args.block_rows;
    for (int b = 0; b < blocks; ++b) args.block_experts[block + b] = l;
    args.expert_rows[l] = rows;
    expert_slot[l] = block * args.block_rows;
    block += blocks;
  }
  if (tid == kAlignThreads - 1) {
    args.counters[kMoeBlocksMade] = block;  // the last run ends at the total
    args.counters[kMoeInvalidChoices] = invalid_choices;
    for (int c = kMoeInvalidChoices + 1; c < kMoeAlignCounters; ++c) args.counters[c] = 0;
  }
  __syncthreads();

  if (warp != 0) return;
  for (int32_t base = 0; base < args.choices; base += 32) {
    const int32_t row = base + lane;
    const int local = row < args.choices ? local_expert_of(args, row) : -1;
    const unsigned same = __match_any_sync(0xffffffffu, local);
    const unsigned lanes_below = (1u << lane) - 1u;
    int slot = -1;
    if (local >= 0) slot = expert_slot[local] + __popc(same & lanes_below);
    __syncwarp();
    if (local >= 0) {
      args.sorted_rows[slot] = row;
      if ((same & lanes_below) == 0) expert_slot[local] += __popc(same);  // the group's first lane
    }
    if (row < args.choices) args.choice_slots[row] = slot;
    __syncwarp();
  }
}

}  // namespace

Status moe_align_on_device(const DeviceMoeRouting& routing, const MoeAlignLayout& layout,
                           void* buffer, size_t buffer_bytes, cudaStream_t stream,
                           bool programmatic_dependent_launch) {
  return moe::launch_align_step(routing, layout, buffer, buffer_bytes, stream,
                                programmatic_dependent_launch, nullptr, 0);
}

namespace moe {

Status launch_align_step(const DeviceMoeRouting& routing, const MoeAlignLayout& layout,
                         void* buffer, size_t buffer_bytes, cudaStream_t stream,
                         bool programmatic_dependent_launch, void* zero_y_rows,
                         int64_t y_row_bytes) {
  if (routing.tokens < 0 || routing.top_k < 1 || routing.experts < 1) {
    return invalid_argument("moe_align_on_device: tokens ", routing.tokens, ", top_k ",
                            routing.top_k, ", experts ", routing.experts,
                            "; need tokens >= 0, top_k >= 1 and experts >= 1");
  }
  if (routing.expert_map == nullptr && routing.local_experts != routing.experts) {
    return invalid_argument("moe_align_on_device: ", routing.local_experts, " local experts of ",
                            routing.experts,
                            " without an expert_map; pass the map, or "
                            "local_experts == experts");
  }
  if (routing.local_experts > routing.experts) {
    return invalid_argument("moe_align_on_device: ", routing.local_experts,
                            " local experts exceed the ", routing.experts, " experts");
  }
  MoeAlignLayout expected;
  SF_RETURN_IF_ERROR(MoeAlignLayout::make(routing.tokens, routing.top_k, routing.local_experts,
                                          layout.block_rows, &expected));
  if (layout.bytes != expected.bytes || layout.max_blocks != expected.max_blocks ||
      layout.local_experts != expected.local_experts) {
    return invalid_argument("moe_align_on_device: the layout was made for another size (",
                            layout.local_experts, " local experts, ", layout.max_blocks,
                            " blocks); make it with MoeAlignLayout::make for tokens ",
                            routing.tokens, ", top_k ", routing.top_k, " and ",
                            routing.local_experts, " local experts");
  }
  if (buffer == nullptr || buffer_bytes < layout.bytes) {
    return invalid_argument("moe_align_on_device: the buffer holds ", buffer_bytes,
                            " bytes; the layout needs ", layout.bytes, " (non-null)");
  }
  if (reinterpret_cast<uintptr_t>(buffer) % 16 != 0) {
    return invalid_argument("moe_align_on_device: the buffer must be 16-byte aligned");
  }
  if (routing.tokens > 0 && routing.topk_ids == nullptr) {
    return invalid_argument("moe_align_on_device: topk_ids is null");
  }
  if (reinterpret_cast<uintptr_t>(routing.topk_ids) % 4 != 0 ||
      reinterpret_cast<uintptr_t>(routing.expert_map) % 4 != 0) {
    return invalid_argument(
        "moe_align_on_device: topk_ids and expert_map must be 4-byte aligned "
        "int32 arrays");
  }
  char* base = static_cast<char*>(buffer);
  AlignArgs args;
  args.topk_ids = routing.topk_ids;
  args.expert_map = routing.expert_map;
  args.choices = static_cast<int32_t>(routing.tokens * routing.top_k);
  args.experts = routing.experts;
  args.local_experts = routing.local_experts;
  args.block_rows = layout.block_rows;
  args.max_blocks = static_cast<int32_t>(layout.max_blocks);
  args.sorted_rows = reinterpret_cast<int32_t*>(base + layout.sorted_rows_offset);
  args.block_experts = reinterpret_cast<int32_t*>(base + layout.block_experts_offset);
  args.expert_rows = reinterpret_cast<int32_t*>(base + layout.expert_rows_offset);
  args.choice_slots = reinterpret_cast<int32_t*>(base + layout.choice_slots_offset);
  args.counters = reinterpret_cast<int32_t*>(base + layout.counters_offset);
  args.y = static_cast<uint8_t*>(zero_y_rows);
  args.y_row_bytes = y_row_bytes;
  const size_t shared = sizeof(int32_t) * static_cast<size_t>(routing.local_experts);
  return gpu::launch(moe_align_kernel, dim3(1), dim3(kAlignThreads), shared, stream,
                     programmatic_dependent_launch, "moe_align_kernel launch", args);
}

}  // namespace moe

}  // namespace sailfish
