// MoE on the device (docs/MOE.md). The align step runs from routing the router left on the device,
// so a layer needs no host synchronization and can be captured in a CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sailfish/moe.h"
#include "sailfish/packed_format.h"
#include "sailfish/sailfish.h"
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
// blocks made, and the counters (MoeAlignCounter). An invalid choice's slot is -1. A choice whose
// id lies outside [0, experts), or whose map entry outside [-1, local_experts), is skipped and
// counted in counters[kMoeInvalidChoices]; nothing is read or written out of bounds. Enqueued on
// stream: no allocation, no synchronization. One CTA does the work, in time linear in tokens *
// top_k (built for decode-sized layers). programmatic_dependent_launch: the kernel may launch
// while the one before it in the stream drains (it waits for it before reading or writing).
Status moe_align_on_device(const DeviceMoeRouting& routing, const MoeAlignLayout& layout,
                           void* buffer, size_t buffer_bytes, cudaStream_t stream,
                           bool programmatic_dependent_launch = false);

// ---- Expert weights ----------------------------------------------------------------------------

// A layer's local experts on the device, stacked: one packed geometry and format for all, expert
// e's arrays at a fixed stride. Non-owning views; DeviceExpertsStorage owns them.
struct DeviceExperts {
  PackedGeometry geometry;  // of one expert
  int experts = 0;
  DType scale_dtype = DType::kBF16;
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  const void* codes = nullptr;   // [experts][geometry.code_bytes()]
  const void* scales = nullptr;  // [experts][scale_rows][n_pad] of scale_dtype
  // [2][experts][scale_rows][n_pad] u16: every expert's zero shifts, then every expert's folds
  // (PackedWeight::zero_fold's two planes, each stacked over the experts); null for kNone.
  const void* zero_fold = nullptr;

  int64_t meta_elements() const { return geometry.scale_rows * geometry.n_pad; }
};

// Copies expert e of any DeviceExperts view back to the host (synchronous): codes, scales and
// zero_fold, the bytes the kernels read (a benchmark's experts filled in place, say).
Status download_expert(const DeviceExperts& experts, int expert, PackedWeight* host);

// Owns the device memory of a DeviceExperts (one cudaMalloc, freed on destruction).
class DeviceExpertsStorage {
 public:
  DeviceExpertsStorage() = default;
  // A moved-from storage is empty (its view too).
  DeviceExpertsStorage(DeviceExpertsStorage&& other) noexcept;
  DeviceExpertsStorage& operator=(DeviceExpertsStorage&& other) noexcept;

  // Uploads the local experts' packed weights, in local order (synchronous). All must share
  // geometry, scale dtype and zero-point kind; act-order weights are refused (UNSUPPORTED: each
  // expert would permute the activations its own way).
  static Status upload(const std::vector<PackedWeight>& experts, DeviceExpertsStorage* out);
  // Copies expert e back (synchronous): codes, scales and zero_fold, as DeviceWeightStorage does.
  Status download(int expert, PackedWeight* host) const;

  const DeviceExperts& view() const { return view_; }
  size_t bytes() const { return bytes_; }

 private:
  struct CudaFree {
    void operator()(void* memory) const;
  };
  DeviceExperts view_;
  std::unique_ptr<void, CudaFree> memory_;  // one allocation holds every array
  size_t bytes_ = 0;
};

// ---- Plan and run ------------------------------------------------------------------------------

// One MoE GEMM (include/sailfish/moe.h): routing sizes, the experts' format, the GEMM's form.
struct MoeProblem {
  int64_t tokens = 0;
  int top_k = 0;
  int experts = 0;        // global
  int local_experts = 0;  // this rank's: the DeviceExperts' count
  PackedGeometry geometry;
  DType scale_dtype = DType::kBF16;
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  DType act_dtype = DType::kBF16;  // activations and output; must equal scale_dtype
  MoeGemm gemm;
  bool has_bias = false;  // bias [local_experts][n] of act_dtype

  static MoeProblem for_experts(const DeviceExperts& experts, int64_t tokens, int top_k,
                                int global_experts, const MoeGemm& gemm, DType act_dtype,
                                bool has_bias);
};

// An unset field takes its SAILFISH_* variable, read at each plan_moe call (docs/CONFIG.md), else
// the default.
struct MoeOptions {
  std::optional<int> block_rows;  // SAILFISH_MOE_BLOCK_ROWS = 8, 16 or 32 (moe_block_rows_for)
  std::optional<int64_t> splits;  // SAILFISH_MOE_SPLITS = 1-8: the expert GEMM's split-K depth
                                  // (default: planned)
  // SAILFISH_MOE_FUSE = 0/1 (default 1): the gather and the combine run inside the expert GEMM
  // where the shape allows (MoePlan::fused_gather, fused_combine); 0 keeps the four launches.
  std::optional<bool> fuse;
  // SAILFISH_MOE_SELF_ALIGN = 0/1 (default: the rule MoePlan::self_align states): with fuse, the
  // expert GEMM ranks the routing itself; 0 keeps the align launch, 1 self-aligns split grids too
  // (within one wave), which the rule leaves out.
  std::optional<bool> self_align;
  // SAILFISH_PDL = 0/1 (default 1): each launch after the first may start while the one before it
  // drains (Hopper's programmatic dependent launch; every kernel waits before reading its inputs).
  std::optional<bool> programmatic_dependent_launch;
};

// How plan_moe runs the layer (docs/MOE.md): the align step, a gather of the blocks' activation
// rows, the decode tier's warp-split kernel with one sorted block a CTA on its expert's weight
// (gemm: a decode plan, DecodePlan::moe), and a combine step that applies the router weights and
// the bias and writes Y (summing a token's choices in choice order for MoeOutput::kTokenSum).
// The gather and the combine run inside the GEMM where they can (fused_gather, fused_combine),
// so a layer is two launches, or three for a sum over several choices.
// Every step is deterministic: the GEMM's split CTAs add through a cluster in split order.
// The self-aligned expert GEMM's limits (MoePlan::self_align).
inline constexpr int64_t kMoeSelfAlignMaxChoices = 512;
inline constexpr int kMoeSelfAlignMaxExperts = 1024;

struct MoePlan {
  MoeProblem problem;
  int block_rows = 0;
  MoeAlignLayout align;
  Plan gemm;  // problem.m = align.max_blocks * block_rows rows
  // The GEMM's activation copies read A's rows through the align step's sorted rows: K a multiple
  // of 8 (and of 64 at blocks of 32 rows, whose loop reads whole blocks), and A 16-byte aligned at
  // run_moe. Otherwise a gather kernel copies them into the workspace first.
  bool fused_gather = false;
  // The GEMM's epilogue writes Y's rows with the router weights and the bias: MoeOutput::kChoice,
  // or kTokenSum with top_k 1, every expert local (the align step zeroes the rows of the rare
  // choices no block holds: invalid ids). Otherwise a combine kernel reads the GEMM's products.
  bool fused_combine = false;
  // No align launch: each expert GEMM CTA ranks the routing itself (fused gather only, at most
  // kMoeSelfAlignMaxChoices choices and kMoeSelfAlignMaxExperts local experts, one split, a grid
  // within one wave, since every CTA pays for the ranking). The workspace's align arrays then hold
  // only what the combine kernel reads (block experts and choice slots), written by the GEMM.
  bool self_align = false;
  size_t align_offset = 0;     // workspace offsets (bytes)
  size_t gathered_offset = 0;  // [gemm rows][k_pad] act_dtype: the blocks' activation rows
                               // (no bytes when fused_gather)
  size_t products_offset = 0;  // [gemm rows][n] act_dtype: the expert GEMM's output (no bytes
                               // when fused_combine)
  size_t workspace_bytes = 0;
  std::string reason;
};

// Pure host work (device attributes and occupancy queries; no launch, no allocation). device: a
// CUDA ordinal, or -1 for the current device. UNSUPPORTED where the layer is too large for one
// call: more than 2^30 choice rows (tokens * top_k; int32 row indices), more than 65535 blocks,
// or (without the fused gather) a gathered slab of 2^32 elements or more, the expert GEMM's
// 32-bit row offsets.
Status plan_moe(const MoeProblem& problem, int device, const MoeOptions& options, MoePlan* out);

struct MoeRunArgs {
  DeviceMoeRouting routing;    // sizes must match the plan's problem
  const void* a = nullptr;     // [gemm.input_rows][k] act_dtype
  const void* bias = nullptr;  // [local_experts][n] act_dtype, or null (as planned)
  void* y = nullptr;           // [gemm.output_rows][n] act_dtype
  const DeviceExperts* experts = nullptr;
};

// Enqueues the layer's steps on stream: no allocation, no synchronization, safe to capture in a
// CUDA graph. workspace: workspace_bytes of device memory, 256-byte aligned.
Status run_moe(const MoePlan& plan, const MoeRunArgs& args, void* workspace, size_t workspace_bytes,
               cudaStream_t stream);

}  // namespace sailfish
