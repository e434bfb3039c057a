// run_moe: a MoE GEMM in two to four launches (docs/MOE.md), none of them synchronizing with the
// host:
//   1. the align step (align_kernel.cu): the routing sorted into blocks of one expert each; or,
//      self-aligned (MoePlan::self_align, decode sizes), no launch: every expert GEMM CTA ranks
//      the routing itself (decode/moe_block_rank.cuh);
//   2. the gather, unless fused (MoePlan::fused_gather): each block's activation rows copied into
//      a [rows][k_pad] slab, zero past K and in padding rows. Fused, the expert GEMM's copies read
//      A's rows in place through the sorted rows;
//   3. the expert GEMM: the decode tier's warp-split kernel, MoE instance, one block a CTA on its
//      expert's weight (blocks past those filled exit at once), into Y (fused combine) or a
//      [rows][n] product slab;
//   4. the combine, unless fused (MoePlan::fused_combine): Y from the products through
//      choice_slots, times the router weights, plus the expert's bias, summed over a token's
//      choices in choice order for kTokenSum.
// Under programmatic dependent launch (the plan's gemm.programmatic_dependent_launch) every launch
// may start while the one before it drains (the first one: the caller's kernel before run_moe);
// every kernel waits for it before reading anything, and writes nothing before that wait, so a
// layer never overlaps the previous layer's use of the same workspace or Y.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/cuda_check.h"
#include "common/host_math.h"
#include "common/launch.cuh"
#include "common/ptx/griddepcontrol.cuh"
#include "decode/config.h"
#include "decode/kernel_instances.h"
#include "moe/align_step.h"
#include "moe/plan_moe.h"
#include "sailfish/moe_gpu.h"

namespace sailfish {
namespace {

constexpr int kSupportThreads = 256;

template <typename T>
struct GatherArgs {
  const T* a;                  // [input rows][k]
  const int32_t* sorted_rows;  // the align step's
  const int32_t* counters;     // [kMoeBlocksMade]: blocks filled
  T* out;                      // [rows][k_pad]
  int64_t k, k_pad;
  int32_t block_rows, top_k;
  bool per_token;     // MoeInput::kToken: choice row r reads A[r / top_k]
  bool vector_loads;  // k % 8 == 0 and A 16-byte aligned
};

// One thread an 8-column chunk of a gathered row, over the blocks the routing filled.
template <typename T>
__global__ void __launch_bounds__(kSupportThreads) moe_gather_kernel(GatherArgs<T> g) {
  gpu::wait_for_previous_grid();
  gpu::allow_next_grid();  // the GEMM's own wait holds it until this grid is done
  const int64_t chunks = g.k_pad / 8;
  const int64_t total = int64_t(g.counters[kMoeBlocksMade]) * g.block_rows * chunks;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t slot = i / chunks, column = (i % chunks) * 8;
    const int32_t choice = g.sorted_rows[slot];
    uint4 chunk = make_uint4(0, 0, 0, 0);
    if (choice >= 0 && column < g.k) {
      const T* src = g.a + (g.per_token ? choice / g.top_k : choice) * g.k + column;
      if (g.vector_loads) {
        chunk = *reinterpret_cast<const uint4*>(src);
      } else {
        alignas(16) T values[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) values[e] = column + e < g.k ? src[e] : T(0.0f);
        chunk = *reinterpret_cast<const uint4*>(values);
      }
    }
    *reinterpret_cast<uint4*>(g.out + slot * g.k_pad + column) = chunk;
  }
}

template <typename T>
struct CombineArgs {
  const T* products;             // [rows][n]
  const int32_t* choice_slots;   // the align step's
  const int32_t* block_experts;  // the align step's: a slot's local expert (for its bias)
  const float* topk_weights;     // [choices], or null: every weight 1
  const T* bias;                 // [local experts][n], or null
  T* y;                          // [output rows][n]
  int64_t n, output_rows;
  int32_t top_k, block_rows;
  bool token_sum;  // MoeOutput::kTokenSum
};

template <typename T>
__device__ __forceinline__ float choice_term(const CombineArgs<T>& c, int64_t choice,
                                             int64_t column) {
  const int32_t slot = c.choice_slots[choice];
  if (slot < 0) return 0.0f;  // an expert held elsewhere (or an invalid id, skipped)
  float value = static_cast<float>(c.products[slot * c.n + column]);
  if (c.bias != nullptr) {
    value += static_cast<float>(c.bias[c.block_experts[slot / c.block_rows] * c.n + column]);
  }
  return c.topk_weights != nullptr ? c.topk_weights[choice] * value : value;
}

// One thread an output element; a token's choices summed in fp32, in choice order.
template <typename T>
__global__ void __launch_bounds__(kSupportThreads) moe_combine_kernel(CombineArgs<T> c) {
  gpu::wait_for_previous_grid();
  gpu::allow_next_grid();
  const int64_t total = c.output_rows * c.n;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / c.n, column = i % c.n;
    float sum = 0.0f;
    if (c.token_sum) {
      for (int j = 0; j < c.top_k; ++j) sum += choice_term(c, row * c.top_k + j, column);
    } else {
      sum = choice_term(c, row, column);
    }
    c.y[i] = static_cast<T>(sum);
  }
}

Status check_args(const MoePlan& plan, const MoeRunArgs& args, void* workspace,
                  size_t workspace_bytes) {
  const MoeProblem& p = plan.problem;
  const DeviceMoeRouting& r = args.routing;
  if (r.tokens != p.tokens || r.top_k != p.top_k || r.experts != p.experts ||
      r.local_experts != p.local_experts) {
    return invalid_argument("run_moe: the routing (tokens ", r.tokens, ", top_k ", r.top_k,
                            ", experts ", r.experts, ", local ", r.local_experts,
                            ") is not the planned one (tokens ", p.tokens, ", top_k ", p.top_k,
                            ", experts ", p.experts, ", local ", p.local_experts, ")");
  }
  // moe_align_on_device's routing checks, made here for every plan: a self-aligned one has no
  // align launch, and its expert GEMM reads the ids and the map itself (without a map it would
  // take global ids for local ones; a misaligned int32 array faults the kernel).
  if (r.expert_map == nullptr && r.local_experts != r.experts) {
    return invalid_argument("run_moe: ", r.local_experts, " local experts of ", r.experts,
                            " without an expert_map; pass the map, or local_experts == experts");
  }
  if (reinterpret_cast<uintptr_t>(r.topk_ids) % 4 != 0 ||
      reinterpret_cast<uintptr_t>(r.expert_map) % 4 != 0) {
    return invalid_argument("run_moe: topk_ids and expert_map must be 4-byte aligned int32 arrays");
  }
  const DeviceExperts* e = args.experts;
  if (e == nullptr || e->codes == nullptr || e->scales == nullptr) {
    return invalid_argument("run_moe: experts (and their codes and scales) must be non-null");
  }
  // Every geometry field: the kernels step between experts and find the fold plane with the
  // view's code_bytes() and meta_elements().
  if (e->experts != p.local_experts || !same_geometry(e->geometry, p.geometry) ||
      e->scale_dtype != p.scale_dtype || e->zero_kind != p.zero_kind ||
      (e->zero_fold == nullptr) != (p.zero_kind == ZeroPointKind::kNone)) {
    return invalid_argument(
        "run_moe: the experts (", e->experts, " of ", e->geometry.n, " x ", e->geometry.k, ", int",
        e->geometry.bits, ") are not the planned ones (", p.local_experts, " of ", p.geometry.n,
        " x ", p.geometry.k, ", int", p.geometry.bits, ") or their zero folds are missing");
  }
  // The expert GEMM copies codes, scale rows and zero planes with 16-byte cp.async: a misaligned
  // array is a fault that leaves the CUDA context unusable. Each expert's arrays start a whole
  // number of 64-column rows (128 bytes or more) after the last, so the bases decide it.
  if (reinterpret_cast<uintptr_t>(e->codes) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(e->scales) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(e->zero_fold) % 16 != 0) {
    return invalid_argument("run_moe: the experts' codes, scales and zero_fold must be 16-byte "
                            "aligned (cudaMalloc'd memory and DeviceExpertsStorage are)");
  }
  if ((args.bias != nullptr) != p.has_bias) {
    return invalid_argument("run_moe: bias is ", args.bias ? "given" : "null",
                            " but the plan was made ", p.has_bias ? "with" : "without", " one");
  }
  if (p.tokens > 0 && (args.a == nullptr || args.y == nullptr || r.topk_ids == nullptr)) {
    return invalid_argument("run_moe: a, y and the routing's topk_ids must be non-null");
  }
  if (p.gemm.apply_router_weights && p.tokens > 0 && r.topk_weights == nullptr) {
    return invalid_argument("run_moe: the plan applies router weights; topk_weights is null");
  }
  const size_t act = dtype_bytes(p.act_dtype);
  if (reinterpret_cast<uintptr_t>(args.a) % act != 0 ||
      reinterpret_cast<uintptr_t>(args.y) % act != 0 ||
      reinterpret_cast<uintptr_t>(args.bias) % act != 0 ||
      reinterpret_cast<uintptr_t>(r.topk_weights) % 4 != 0) {
    return invalid_argument(
        "run_moe: a, bias and y must be aligned to their element size, "
        "topk_weights to 4 bytes");
  }
  if (plan.fused_gather && p.tokens > 0 && reinterpret_cast<uintptr_t>(args.a) % 16 != 0) {
    return invalid_argument(
        "run_moe: a must be 16-byte aligned for this plan, whose expert GEMM reads A's rows in "
        "place (MoePlan::fused_gather); plan with MoeOptions::fuse = false (SAILFISH_MOE_FUSE=0) "
        "to pass A at any element alignment");
  }
  if (workspace_bytes < plan.workspace_bytes ||
      (plan.workspace_bytes > 0 && workspace == nullptr)) {
    return invalid_argument("run_moe: the workspace holds ", workspace_bytes,
                            " bytes; the plan needs ", plan.workspace_bytes);
  }
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0) {
    return invalid_argument(
        "run_moe: the workspace must be 256-byte aligned (cudaMalloc memory is)");
  }
  return Status();
}

template <typename T>
Status run_typed(const MoePlan& plan, const MoeRunArgs& args, char* ws, cudaStream_t stream) {
  const MoeProblem& p = plan.problem;
  const PackedGeometry& g = p.geometry;
  const DeviceExperts& experts = *args.experts;
  const DecodePlan& d = plan.gemm.decode;
  const MoeAlignLayout& layout = plan.align;
  const int64_t rows = layout.max_blocks * plan.block_rows;
  const int sm_count = plan.gemm.sm_count;
  char* align = ws + plan.align_offset;
  const auto* sorted_rows = reinterpret_cast<const int32_t*>(align + layout.sorted_rows_offset);
  const auto* block_experts = reinterpret_cast<const int32_t*>(align + layout.block_experts_offset);
  const auto* choice_slots = reinterpret_cast<const int32_t*>(align + layout.choice_slots_offset);
  const auto* counters = reinterpret_cast<const int32_t*>(align + layout.counters_offset);
  T* gathered = reinterpret_cast<T*>(ws + plan.gathered_offset);
  T* products = reinterpret_cast<T*>(ws + plan.products_offset);

  const bool pdl = plan.gemm.programmatic_dependent_launch;
  if (!plan.self_align) {
    SF_RETURN_IF_ERROR(moe::launch_align_step(args.routing, layout, align, layout.bytes, stream,
                                              pdl, plan.fused_combine ? args.y : nullptr,
                                              g.n * static_cast<int64_t>(sizeof(T))));
  }

  if (!plan.fused_gather) {
    GatherArgs<T> gather;
    gather.a = static_cast<const T*>(args.a);
    gather.sorted_rows = sorted_rows;
    gather.counters = counters;
    gather.out = gathered;
    gather.k = g.k;
    gather.k_pad = g.k_pad;
    gather.block_rows = plan.block_rows;
    gather.top_k = p.top_k;
    gather.per_token = p.gemm.input == MoeInput::kToken;
    gather.vector_loads = g.k % 8 == 0 && reinterpret_cast<uintptr_t>(args.a) % 16 == 0;
    SF_RETURN_IF_ERROR(
        gpu::launch(moe_gather_kernel<T>,
                    dim3(::sailfish::detail::support_grid(rows * (g.k_pad / 8), sm_count)),
                    dim3(kSupportThreads), 0, stream, pdl, "moe_gather_kernel launch", gather));
  }

  decode::DecodeParams params;
  params.codes = static_cast<const uint8_t*>(experts.codes);
  params.scales = experts.scales;
  const auto* planes = static_cast<const uint16_t*>(experts.zero_fold);
  params.zero_shift = planes;  // expert 0's shifts; its folds follow every expert's shifts
  params.zero_fold =
      planes != nullptr ? planes + experts.experts * experts.meta_elements() : nullptr;
  params.a = plan.fused_gather ? args.a : gathered;
  params.lda = plan.fused_gather ? g.k : g.k_pad;
  params.y = plan.fused_combine ? args.y : products;
  params.bias = plan.fused_combine ? args.bias : nullptr;  // else the combine adds it
  params.partials = nullptr;
  params.m = static_cast<int32_t>(rows);
  params.n = static_cast<int32_t>(g.n);
  params.k = static_cast<int32_t>(g.k);
  params.k_blocks = static_cast<int32_t>(g.k_blocks);
  params.n_pad = static_cast<int32_t>(g.n_pad);
  params.m_pad = static_cast<int32_t>(rows);
  params.group_shift = ::sailfish::detail::group_shift(g);
  params.splits = d.splits;
  params.epilogue = static_cast<decode::Epilogue>(d.epilogue);
  params.warp_stage_bytes = d.warp_stage_bytes;
  params.act_rows = d.act_rows;
  params.warp_stages = d.warp_stages;
  params.stream_k_strips = 0;
  params.cluster_push = 0;
  params.moe_block_experts = block_experts;
  params.moe_code_stride = g.code_bytes();
  params.moe_meta_stride = experts.meta_elements();
  params.moe_sorted_rows = plan.fused_gather || plan.fused_combine ? sorted_rows : nullptr;
  params.moe_gather_rows = plan.fused_gather ? 1 : 0;
  params.moe_choices_per_row = p.gemm.input == MoeInput::kToken ? p.top_k : 1;
  params.moe_direct_output = plan.fused_combine ? 1 : 0;
  if (plan.self_align) {
    params.moe_self_align = 1;
    params.moe_topk_ids = args.routing.topk_ids;
    params.moe_expert_map = args.routing.expert_map;
    params.moe_choices = static_cast<int32_t>(p.tokens * p.top_k);
    params.moe_experts = p.experts;
    params.moe_local_experts = p.local_experts;
    params.moe_slots_offset =
        d.warps * decode::warp_split_region_bytes(d.warp_stage_bytes, d.warp_stages);
    // The combine kernel's inputs, which no align step writes here.
    params.moe_block_experts_out = reinterpret_cast<int32_t*>(align + layout.block_experts_offset);
    params.moe_choice_slots_out = reinterpret_cast<int32_t*>(align + layout.choice_slots_offset);
  }
  params.moe_row_weights =
      plan.fused_combine && p.gemm.apply_router_weights ? args.routing.topk_weights : nullptr;
  const dim3 grid(static_cast<unsigned>(g.n_blocks), static_cast<unsigned>(d.splits),
                  static_cast<unsigned>(d.m_groups));
  const Status launched = g.bits == 4
                              ? decode::launch_moe_kernel<T, 4>(params, d.token_tiles, grid,
                                                                d.shared_bytes, pdl, stream)
                              : decode::launch_moe_kernel<T, 8>(params, d.token_tiles, grid,
                                                                d.shared_bytes, pdl, stream);
  SF_RETURN_IF_ERROR(launched);
  if (plan.fused_combine) return Status();

  CombineArgs<T> combine;
  combine.products = products;
  combine.choice_slots = choice_slots;
  combine.block_experts = block_experts;
  combine.topk_weights = p.gemm.apply_router_weights ? args.routing.topk_weights : nullptr;
  combine.bias = static_cast<const T*>(args.bias);
  combine.y = static_cast<T*>(args.y);
  combine.n = g.n;
  combine.output_rows = p.gemm.output == MoeOutput::kTokenSum ? p.tokens : p.tokens * p.top_k;
  combine.top_k = p.top_k;
  combine.block_rows = plan.block_rows;
  combine.token_sum = p.gemm.output == MoeOutput::kTokenSum;
  return gpu::launch(moe_combine_kernel<T>,
                     dim3(::sailfish::detail::support_grid(combine.output_rows * g.n, sm_count)),
                     dim3(kSupportThreads), 0, stream, pdl, "moe_combine_kernel launch", combine);
}

}  // namespace

Status run_moe(const MoePlan& plan, const MoeRunArgs& args, void* workspace, size_t workspace_bytes,
               cudaStream_t stream) {
  SF_RETURN_IF_ERROR(moe::validate(plan.problem));
  if (!plan.gemm.decode.moe) return invalid_argument("run_moe: the plan was not made by plan_moe");
  SF_RETURN_IF_ERROR(check_args(plan, args, workspace, workspace_bytes));
  if (plan.problem.tokens == 0) return Status();  // Y has no rows
  char* ws = static_cast<char*>(workspace);
  return plan.problem.act_dtype == DType::kF16 ? run_typed<__half>(plan, args, ws, stream)
                                               : run_typed<__nv_bfloat16>(plan, args, ws, stream);
}

}  // namespace sailfish
