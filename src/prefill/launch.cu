// Prefill tier host side: plan-time configuration (token width, tiles, split depth, workspace)
// and the launch sequence prep -> main -> reduce (split grid) or fixup (Stream-K).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "common/cuda_check.h"
#include "common/host_math.h"
#include "common/launch.cuh"
#include "common/zero_planes.h"
#include "decode/prep_kernel.cuh"
#include "prefill/config.h"
#include "prefill/kernel_instances.h"
#include "prefill/launch.h"
#include "prefill/reduce_kernel.cuh"
#include "prefill/stream_k.h"
#include "prefill/stream_k_fixup_kernel.cuh"
#include "prefill/tensor_map.h"

namespace sailfish::prefill {

using ::sailfish::detail::align_up;

Status prefill_available(int device) {
#ifndef SAILFISH_HAS_SM90A_KERNELS
  return unsupported("tier prefill needs kernels built for sm_90a; this build has none "
                     "(configure with SAILFISH_CUDA_ARCHS containing 90a); use decode or dense");
#endif
  int major = 0, minor = 0;
  SF_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  SF_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0) {
    return unsupported("tier prefill needs an sm_90 (Hopper) device; device ", device, " is sm_",
                       major, minor, "; use decode or dense");
  }
  int current = 0;
  SF_CUDA_CHECK(cudaGetDevice(&current));
  SF_CUDA_CHECK(cudaSetDevice(device));
  int version = 0;
  const Status query = main_kernel_binary_version<__nv_bfloat16, 4>(&version);
  SF_CUDA_CHECK(cudaSetDevice(current));
  SF_RETURN_IF_ERROR(query);
  if (version != 90) {
    return unsupported("tier prefill needs kernels built for sm_90a; this build runs sm_", version,
                       " code on device ", device,
                       " (configure with SAILFISH_CUDA_ARCHS containing 90a)");
  }
  return Status();
}

Status plan_prefill(std::optional<int64_t> forced_tokens, std::optional<int64_t> forced_splits,
                    std::optional<int64_t> forced_stages, std::optional<bool> forced_stream_k,
                    Plan* plan) {
  const Problem& p = plan->problem;
  const PackedGeometry& g = p.geometry;
  PrefillPlan f;
  const int64_t m = std::max<int64_t>(p.m, 1);
  f.n_tiles = static_cast<int>((g.n_blocks + kConsumers - 1) / kConsumers);
  if (forced_tokens.has_value() && !is_token_width(*forced_tokens)) {
    return invalid_argument("prefill_tokens is ", *forced_tokens,
                            "; the prefill tier has tiles of 16, 32, 64, 128 or 256 tokens");
  }
  const TileChoice choice =
      choose_tiles(f.n_tiles, m, g.n_pad, g.k_blocks, plan->sm_count,
                   forced_tokens.has_value() ? static_cast<int>(*forced_tokens) : 0);
  f.tokens = choice.tokens;
  const int64_t m_tiles = (m + f.tokens - 1) / f.tokens;
  const int64_t tiles = int64_t(f.n_tiles) * m_tiles;
  if (forced_splits.has_value() && forced_stream_k.value_or(false)) {
    return invalid_argument("prefill_splits (", *forced_splits,
                            ") and prefill_stream_k = 1 both set; a Stream-K grid has no split "
                            "depth: set one of them");
  }
  f.splits = forced_splits.has_value()
                 ? static_cast<int>(std::min<int64_t>(*forced_splits, g.k_blocks))
                 : choice.splits;
  // Work units (tiles x splits; a forced depth may pass kMaxSplits) and token indices are 32-bit
  // in the kernel.
  if (p.m > std::numeric_limits<int32_t>::max() / 2 ||
      tiles * std::max(f.splits, kMaxSplits) > std::numeric_limits<int32_t>::max()) {
    return unsupported("prefill: m = ", p.m, " with n = ", g.n, " has too many tiles (", tiles,
                       ") for this tier; use tier dense");
  }
  f.m_tiles = static_cast<int>(m_tiles);
  const int64_t iterations = tiles * g.k_blocks;
  if (forced_stream_k.value_or(false) && iterations > std::numeric_limits<int32_t>::max()) {
    return unsupported("prefill_stream_k = 1: ", tiles, " tiles of ", g.k_blocks,
                       " k-blocks overflow the Stream-K kernel's 32-bit cursors; use the split "
                       "grid (prefill_stream_k = 0)");
  }
  // Stream-K where forced, or where the cost model prefers it to the split grid it chose;
  // never with a forced split depth (stream_k.h).
  f.stream_k = forced_stream_k.has_value()
                   ? *forced_stream_k
                   : !forced_splits.has_value() &&
                         prefer_stream_k(f.n_tiles, m, g.n_pad, g.k_blocks, plan->sm_count,
                                         TileChoice{f.tokens, f.splits});
  if (f.stream_k) {
    f.splits = 1;
    f.grid = stream_k_grid(iterations, plan->sm_count, f.tokens);
  } else {
    f.grid = static_cast<int>(
        std::min<int64_t>(tiles * f.splits, int64_t(plan->sm_count) * ctas_per_sm(f.tokens)));
    // Each CTA walks the units with a 32-bit cursor that steps by the grid (stream_k.h,
    // WorkSchedule) and stops at the first value past the last unit: up to tiles x splits - 1 +
    // grid, which the bound above leaves up to grid - 1 short (8 splits of 2^28 - 1 tiles: the
    // cursor wrapped negative, passed the end test and ran negative units).
    if (tiles * f.splits - 1 + f.grid > std::numeric_limits<int32_t>::max()) {
      return unsupported("prefill: m = ", p.m, " with n = ", g.n, " has too many tiles (", tiles,
                         ") for ", f.splits, " splits: ", tiles * f.splits, " work units and a ",
                         "grid of ", f.grid, " CTAs pass the kernel's 32-bit work-unit cursor ",
                         "(2^31 - 1); use fewer prefill_splits or tier dense");
    }
  }
  const bool zero_points = p.zero_kind != ZeroPointKind::kNone;
  const int deepest = max_stages(g.bits, f.tokens, zero_points);
  if (forced_stages.has_value() && (*forced_stages < kMinStages || *forced_stages > deepest)) {
    return invalid_argument("prefill_stages is ", *forced_stages, "; with ", g.bits,
                            "-bit weights and ", f.tokens, "-token tiles it must be ", kMinStages,
                            "..", deepest, " (shared memory)");
  }
  f.stages = forced_stages.has_value() ? static_cast<int>(*forced_stages)
                                       : stage_count(g.bits, f.tokens, zero_points);
  // TMA needs 16-byte aligned activation rows (k % 8 == 0); act-order needs them permuted.
  f.copy_activations = p.act_order || g.k % 8 != 0;
  size_t offset = 0;
  f.activation_offset = offset;
  if (f.copy_activations) offset = align_up(offset + size_t(p.m) * g.k_pad * 2, 256);
  f.partials_offset = offset;
  if (f.stream_k) {
    offset = align_up(offset + size_t(stream_k_slots(f.grid)) *
                                   size_t(stream_k_slot_floats(f.tokens)) * 4,
                      256);
  } else if (f.splits > 1) {
    offset = align_up(offset + size_t(f.splits) * g.n_pad * size_t(f.m_tiles) * f.tokens * 4, 256);
  }
  plan->prefill = f;
  plan->workspace_bytes = offset;
  return Status();
}

namespace {

template <typename T>
Status run_typed(const Plan& plan, const RunArgs& args, void* workspace, cudaStream_t stream) {
  const Problem& p = plan.problem;
  const PackedGeometry& g = p.geometry;
  const PrefillPlan& f = plan.prefill;
  const DeviceWeight& w = *args.weight;
  char* ws = static_cast<char*>(workspace);
  const bool pdl = plan.programmatic_dependent_launch;
  if (reinterpret_cast<uintptr_t>(w.scales) % 16 != 0 ||
      (w.zero_fold != nullptr && reinterpret_cast<uintptr_t>(w.zero_fold) % 16 != 0)) {
    return invalid_argument("run: the prefill tier bulk-copies scale rows; weight scales and "
                            "zero folds must be 16-byte aligned (cudaMalloc memory is)");
  }

  const void* a = args.a;
  int64_t lda = g.k;
  int64_t columns = g.k;
  if (f.copy_activations) {
    const decode::PrepParams prep =
        decode::make_prep_params(args, g, p.m, ws + f.activation_offset, nullptr);
    SF_RETURN_IF_ERROR(decode::launch_prep<T>(prep, plan.sm_count, pdl, stream,
                                              "prefill prep_kernel launch"));
    a = prep.a_out;
    lda = g.k_pad;
    columns = g.k_pad;
  }
  CUtensorMap act_map;
  SF_RETURN_IF_ERROR(
      make_activation_map(a, p.m, columns, lda, p.act_dtype, f.tokens, &act_map));

  PrefillParams params;
  params.codes = static_cast<const uint8_t*>(w.codes);
  params.scales = w.scales;
  const ::sailfish::detail::ZeroPlanes zero = ::sailfish::detail::zero_planes(w);
  params.zero_shift = zero.shifts;
  params.zero_fold = zero.folds;
  params.y = args.y;
  params.bias = f.splits == 1 ? args.bias : nullptr;  // Stream-K plans have one split
  params.partials = reinterpret_cast<float*>(ws + f.partials_offset);
  params.m = static_cast<int>(p.m);
  params.n = static_cast<int>(g.n);
  params.n_blocks = static_cast<int>(g.n_blocks);
  params.k_blocks = static_cast<int>(g.k_blocks);
  params.n_pad = static_cast<int>(g.n_pad);
  params.m_pad = f.m_tiles * f.tokens;
  params.group_shift = ::sailfish::detail::group_shift(g);
  params.meta_rows = ::sailfish::detail::meta_rows_for(params.group_shift);
  params.n_tiles = f.n_tiles;
  params.m_tiles = f.m_tiles;
  params.splits = f.splits;
  params.stages = f.stages;
  params.epilogue = f.stream_k      ? PrefillEpilogue::kStreamK
                    : f.splits == 1 ? PrefillEpilogue::kStore
                                    : PrefillEpilogue::kPartials;
  const Status launched =
      g.bits == 4 ? launch_main_kernel<T, 4>(act_map, params, f.tokens, f.grid, pdl, stream)
                  : launch_main_kernel<T, 8>(act_map, params, f.tokens, f.grid, pdl, stream);
  SF_RETURN_IF_ERROR(launched);
  if (f.stream_k) {
    FixupParams fixup;
    fixup.partials = params.partials;
    fixup.n_tiles = f.n_tiles;
    fixup.m_tiles = f.m_tiles;
    fixup.k_blocks = params.k_blocks;
    fixup.grid = f.grid;
    fixup.tokens = f.tokens;
    fixup.m = params.m;
    fixup.n = params.n;
    fixup.bias = args.bias;
    fixup.y = args.y;
    // One CTA's run shares no tile (it covers them all).
    if (f.grid > 1) {
      SF_RETURN_IF_ERROR(gpu::launch(stream_k_fixup_kernel<T>,
                                     dim3(f.grid - 1, fixup_chunks(f.tokens)),
                                     dim3(kFixupThreads), 0, stream, pdl,
                                     "prefill stream_k_fixup_kernel launch", fixup));
    }
  } else if (f.splits > 1) {
    ReduceParams reduce;
    reduce.partials = params.partials;
    reduce.splits = f.splits;
    reduce.m_pad = params.m_pad;
    reduce.n_pad = params.n_pad;
    reduce.m = params.m;
    reduce.n = params.n;
    reduce.bias = args.bias;
    reduce.y = args.y;
    SF_RETURN_IF_ERROR(gpu::launch(reduce_kernel<T>,
                                   reduce_grid(params.m, params.n, plan.sm_count),
                                   dim3(kReduceThreads), 0, stream, pdl,
                                   "prefill reduce_kernel launch", reduce));
  }
  return Status();
}

}  // namespace

Status run_prefill(const Plan& plan, const RunArgs& args, void* workspace, cudaStream_t stream) {
  return plan.problem.act_dtype == DType::kF16
             ? run_typed<__half>(plan, args, workspace, stream)
             : run_typed<__nv_bfloat16>(plan, args, workspace, stream);
}

}  // namespace sailfish::prefill
