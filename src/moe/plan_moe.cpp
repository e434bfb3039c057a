// plan_moe: the align layout, the expert GEMM's decode plan (the warp-split kernel's MoE instance,
// one sorted block a CTA) and the workspace (docs/MOE.md).
#include "moe/plan_moe.h"

#include <algorithm>
#include <optional>

#include "api/environment.h"
#include "common/cuda_check.h"
#include "common/host_math.h"
#include "decode/config.h"
#include "decode/tile_shapes.h"

namespace sailfish {
namespace moe {

using ::sailfish::detail::align_up;

// The self-aligned CTA's MoE slots (decode/moe_block_rank.cuh: a choice a block row, then the
// expert), past the warps' stages.
constexpr int kMoeSlotBytes = 256;
static_assert(4 * (32 + 1) <= kMoeSlotBytes, "a block of 32 rows and its expert");

Problem gemm_problem(const MoeProblem& problem, int64_t rows) {
  Problem p;
  p.m = rows;
  p.geometry = problem.geometry;
  p.scale_dtype = problem.scale_dtype;
  p.zero_kind = problem.zero_kind;
  p.act_order = false;
  p.act_dtype = problem.act_dtype;
  p.has_bias = false;
  return p;
}

Status validate(const MoeProblem& p) {
  if (p.tokens < 0 || p.top_k < 1 || p.experts < 1 || p.top_k > p.experts) {
    return invalid_argument("MoE problem: tokens ", p.tokens, ", top_k ", p.top_k, ", experts ",
                            p.experts, "; need tokens >= 0 and 1 <= top_k <= experts");
  }
  if (p.local_experts < 1 || p.local_experts > p.experts) {
    return invalid_argument("MoE problem: ", p.local_experts, " local experts of ", p.experts,
                            "; a rank holds 1 to all of them");
  }
  // Bounded before anything forms tokens * top_k (plan_moe does at once), which can pass int64;
  // the limit is MoeAlignLayout::make's (choice rows are int32 on the device).
  if (p.tokens > (int64_t(1) << 30) / p.top_k) {
    return unsupported("MoE problem: tokens * top_k = ", p.tokens, " * ", p.top_k,
                       " choice rows; at most 2^30 are supported (int32 row indices)");
  }
  PackedGeometry check;
  SF_RETURN_IF_ERROR(PackedGeometry::make(p.geometry.n, p.geometry.k, p.geometry.bits,
                                          p.geometry.group_size, &check));
  if (check.n_pad != p.geometry.n_pad || check.k_pad != p.geometry.k_pad ||
      check.scale_rows != p.geometry.scale_rows) {
    return invalid_argument("MoE problem: the geometry is not PackedGeometry::make's for ",
                            p.geometry.n, " x ", p.geometry.k);
  }
  if (p.act_dtype != DType::kF16 && p.act_dtype != DType::kBF16) {
    return invalid_argument("MoE problem: activations are ", dtype_name(p.act_dtype),
                            "; accepted: fp16, bf16");
  }
  if (p.scale_dtype != p.act_dtype) {
    return invalid_argument("MoE problem: ", dtype_name(p.scale_dtype), " scales with ",
                            dtype_name(p.act_dtype),
                            " activations; the experts must be packed for the activation type");
  }
  return Status();
}

Status resolve_options(const MoeOptions& options, MoeOptions* out) {
  if (out == nullptr) return invalid_argument("moe::resolve_options: out is null");
  MoeOptions r = options;
  std::optional<int64_t> number;
  SF_RETURN_IF_ERROR(api::env_int("SAILFISH_MOE_BLOCK_ROWS", 1, &number));
  if (!r.block_rows.has_value() && number.has_value()) {
    const bool supported =
        std::any_of(std::begin(kMoeBlockRowChoices), std::end(kMoeBlockRowChoices),
                    [&](int block_rows) { return block_rows == *number; });
    if (!supported) {
      return invalid_argument("SAILFISH_MOE_BLOCK_ROWS is ", *number, "; accepted: 8, 16 or 32");
    }
    r.block_rows = static_cast<int>(*number);
  }
  SF_RETURN_IF_ERROR(api::env_int("SAILFISH_MOE_SPLITS", 1, &number));
  if (!r.splits.has_value() && number.has_value()) {
    if (*number > decode::kMaxClusterSplits) {
      return invalid_argument("SAILFISH_MOE_SPLITS is ", *number, "; accepted: 1 to ",
                              decode::kMaxClusterSplits);
    }
    r.splits = number;
  }
  std::optional<bool> flag;
  SF_RETURN_IF_ERROR(api::env_bool("SAILFISH_MOE_FUSE", &flag));
  if (!r.fuse.has_value()) r.fuse = flag.value_or(true);
  SF_RETURN_IF_ERROR(api::env_bool("SAILFISH_MOE_SELF_ALIGN", &flag));
  if (!r.self_align.has_value()) r.self_align = flag;  // unset: plan_moe's rule
  SF_RETURN_IF_ERROR(api::env_bool("SAILFISH_PDL", &flag));
  if (!r.programmatic_dependent_launch.has_value()) {
    r.programmatic_dependent_launch = flag.value_or(true);
  }
  *out = r;
  return Status();
}

Status plan_moe(const MoeProblem& problem, const decode::DeviceQueries& q, int device, int sm_count,
                const MoeOptions& options, MoePlan* out) {
  if (out == nullptr) return invalid_argument("plan_moe: out is null");
  SF_RETURN_IF_ERROR(validate(problem));
  const int64_t choices = problem.tokens * problem.top_k;
  const int block_rows = options.block_rows.value_or(
      moe_block_rows_for(choices, problem.local_experts, problem.geometry.code_bytes()));
  if (!is_supported_moe_block_rows(block_rows)) {
    return invalid_argument("plan_moe: block_rows is ", block_rows, "; accepted: 8, 16 or 32");
  }
  if (options.splits.has_value() &&
      (*options.splits < 1 || *options.splits > decode::kMaxClusterSplits)) {
    return invalid_argument("plan_moe: splits is ", *options.splits, "; accepted: 1 to ",
                            decode::kMaxClusterSplits);
  }
  MoePlan plan;
  plan.problem = problem;
  plan.block_rows = block_rows;
  SF_RETURN_IF_ERROR(MoeAlignLayout::make(problem.tokens, problem.top_k, problem.local_experts,
                                          block_rows, &plan.align));
  if (plan.align.max_blocks > decode::kMaxGridYZ) {
    return unsupported("plan_moe: up to ", plan.align.max_blocks, " blocks of ", block_rows,
                       " rows; the expert GEMM's grid takes at most ", decode::kMaxGridYZ,
                       " (fewer tokens a call, or larger blocks)");
  }
  const PackedGeometry& g = problem.geometry;
  const int64_t rows = plan.align.max_blocks * block_rows;

  Plan& gemm = plan.gemm;
  gemm.problem = gemm_problem(problem, rows);
  gemm.tier = Tier::kDecode;
  gemm.deterministic = true;
  gemm.atomic_epilogue = false;
  // Every MoE kernel waits for the previous grid before it reads anything (run_moe.cu).
  gemm.programmatic_dependent_launch = options.programmatic_dependent_launch.value_or(true);
  gemm.device = device;
  gemm.sm_count = sm_count;
  DecodePlan& d = gemm.decode;
  d.moe = true;
  d.warp_split = true;
  d.warps = decode::kWarpSplitWarps;
  d.token_tiles = block_rows / decode::kTokensPerTile;
  d.m_groups = static_cast<int>(plan.align.max_blocks);
  d.act_rows = block_rows;
  d.warp_stage_bytes = decode::warp_split_stage_bytes(
      g.bits, block_rows, decode::meta_rows_for(::sailfish::detail::group_shift(g)),
      problem.zero_kind != ZeroPointKind::kNone);
  d.warp_stages = decode::kStages;
  const int stage_area =
      d.warps * decode::warp_split_region_bytes(d.warp_stage_bytes, d.warp_stages);

  // The fused steps (MoePlan says when each applies). The lean loop of 4 token tiles reads whole
  // 64-column blocks with no K tail test (decode/tile_shapes.h, warp_split_reads_whole_blocks),
  // and the kernel's row offsets into A are 32-bit.
  const bool fuse = options.fuse.value_or(true);
  const int64_t input_rows = problem.gemm.input == MoeInput::kToken ? problem.tokens : choices;
  const bool gather_fits =
      g.k % 8 == 0 &&
      (!decode::warp_split_reads_whole_blocks(d.token_tiles) || g.k % 64 == 0) &&
      input_rows * g.k < (int64_t(1) << 32);
  plan.fused_gather = fuse && gather_fits;
  // Only with every expert local: the align step zeroes the rows of choices no block holds, and
  // under expert parallelism those are most of Y.
  plan.fused_combine = fuse && (problem.gemm.output == MoeOutput::kChoice || problem.top_k == 1) &&
                       problem.local_experts == problem.experts;
  // Unfused, the kernel reads the gathered slab ([rows][k_pad]) with the same 32-bit row offsets
  // (row * k_pad, warp_split_kernel.cuh): past 2^32 elements they would wrap onto other rows and
  // Y would be wrong, silently. The slab holds every choice row and more, so where the choice rows
  // of A are too many for the fused gather, so is the slab (Mixtral 8x7B down at 150000 tokens:
  // 300000 choice rows and a slab of 300224 rows, of 14336 columns).
  if (!plan.fused_gather && rows > 0 && (rows - 1) * g.k_pad >= (int64_t(1) << 32)) {
    return unsupported("plan_moe: the expert GEMM's gathered rows (up to ", rows, " of ", g.k_pad,
                       " columns) pass the kernel's 32-bit row offsets (2^32 elements); run the ",
                       "layer in calls of fewer tokens",
                       gather_fits ? ", or with the fused gather (MoeOptions::fuse)" : "");
  }

  // Split K over the blocks an even routing fills (the real count is known on the device only),
  // at most the cluster epilogue's 8 ranks, and only as deep as the clusters of those blocks are
  // all resident at once (a forced depth: as deep as one cluster is), as the dense tier's
  // cluster_split_count asks. Before, any resident cluster would do: Mixtral 8x7B down at one
  // token (64 strips x 2 blocks) took four splits, 512 CTAs in clusters of four that the GPCs do
  // not hold at once, and ran 27.0 us; two splits ran 22.9 (21.9 self-aligned; H200,
  // docs/perf/moe.md v3 probe).
  d.shared_bytes = stage_area;
  int ctas_per_sm = 0;
  SF_RETURN_IF_ERROR(q.ctas_per_sm(d, &ctas_per_sm));
  if (ctas_per_sm < 1) {
    return internal_error("plan_moe: the MoE kernel does not fit on an SM (", d.token_tiles,
                          " token tiles, ", d.shared_bytes, " bytes of shared memory)");
  }
  const int64_t expected = std::max<int64_t>(
      1, std::min(plan.align.max_blocks,
                  moe_expected_blocks(choices, problem.local_experts, block_rows)));
  int splits = static_cast<int>(options.splits.value_or(
      decode::warp_split_count(g.n_blocks, expected, g.k_blocks, sm_count, ctas_per_sm)));
  splits = static_cast<int>(std::min<int64_t>({splits, decode::kMaxClusterSplits, g.k_blocks}));
  if (q.compute_major < 9) splits = 1;
  const int64_t clusters_needed = options.splits.has_value() ? 1 : g.n_blocks * expected;
  int clusters = 0;
  while (splits > 1) {
    SF_RETURN_IF_ERROR(q.max_clusters(d, splits, &clusters));
    if (clusters >= clusters_needed) break;
    --splits;
  }

  // Self-align: the ranking's scratch (decode/moe_block_rank.cuh) in the stages, its slots past
  // them; every CTA pays for its own ranking, so only where the grid is one wave of CTAs, and by
  // default at one split: split grids have been measured self-aligned at two splits only
  // (0.91-1.00x the align launch; docs/perf/moe.md, the self-align split probe). Asked for
  // (options.self_align true), split grids self-align too, for measurements.
  const int64_t rank_scratch = 4 * (problem.local_experts + choices) + 64;
  const bool asked = options.self_align.value_or(false);
  plan.self_align = options.self_align.value_or(true) && plan.fused_gather &&
                    choices <= kMoeSelfAlignMaxChoices &&
                    problem.local_experts <= kMoeSelfAlignMaxExperts &&
                    rank_scratch <= stage_area && (splits == 1 || asked) &&
                    g.n_blocks * splits * d.m_groups <= int64_t(sm_count) * ctas_per_sm;
  if (plan.self_align) {  // the slots, if the SM still holds as many CTAs (and clusters) with them
    d.shared_bytes = stage_area + kMoeSlotBytes;
    int with_slots = 0;
    clusters = 1;
    SF_RETURN_IF_ERROR(q.ctas_per_sm(d, &with_slots));
    if (splits > 1) SF_RETURN_IF_ERROR(q.max_clusters(d, splits, &clusters));
    plan.self_align = with_slots == ctas_per_sm && clusters >= 1;
    if (!plan.self_align) d.shared_bytes = stage_area;
  }
  d.splits = splits;
  d.epilogue = static_cast<int>(splits > 1 ? decode::Epilogue::kCluster : decode::Epilogue::kStore);
  d.resident_ctas = ctas_per_sm;

  const size_t act_bytes = dtype_bytes(problem.act_dtype);
  const size_t gathered_bytes =
      plan.fused_gather ? 0 : static_cast<size_t>(rows * g.k_pad) * act_bytes;
  const size_t products_bytes =
      plan.fused_combine ? 0 : static_cast<size_t>(rows * g.n) * act_bytes;
  plan.align_offset = 0;
  plan.gathered_offset = align_up(plan.align.bytes, 256);
  plan.products_offset = align_up(plan.gathered_offset + gathered_bytes, 256);
  plan.workspace_bytes = align_up(plan.products_offset + products_bytes, 256);
  const char* block_rows_why = options.block_rows ? "forced"
                               : block_rows == moe_block_rows_for(choices, problem.local_experts)
                                   ? "average rows an expert"
                                   : "8 average rows on a large expert";
  plan.reason = ::sailfish::detail::concat(
      "moe: blocks of ", block_rows, " rows (", block_rows_why, "), up to ", plan.align.max_blocks,
      " blocks, ", splits, " split", splits > 1 ? "s (cluster)" : "", ", ", ctas_per_sm,
      " CTAs an SM, align ", plan.self_align ? "in the GEMM" : "kernel", ", gather ",
      plan.fused_gather ? "fused" : "kernel", ", combine ",
      plan.fused_combine ? "fused" : "kernel");
  *out = std::move(plan);
  return Status();
}

}  // namespace moe

MoeProblem MoeProblem::for_experts(const DeviceExperts& experts, int64_t tokens, int top_k,
                                   int global_experts, const MoeGemm& gemm, DType act_dtype,
                                   bool has_bias) {
  MoeProblem p;
  p.tokens = tokens;
  p.top_k = top_k;
  p.experts = global_experts;
  p.local_experts = experts.experts;
  p.geometry = experts.geometry;
  p.scale_dtype = experts.scale_dtype;
  p.zero_kind = experts.zero_kind;
  p.act_dtype = act_dtype;
  p.gemm = gemm;
  p.has_bias = has_bias;
  return p;
}

Status plan_moe(const MoeProblem& problem, int device, const MoeOptions& options, MoePlan* out) {
  int current = 0;
  SF_CUDA_CHECK(cudaGetDevice(&current));
  if (device < 0) device = current;
  int sm_count = 0;
  SF_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  SF_CUDA_CHECK(cudaSetDevice(device));  // the occupancy queries read the current device
  const Status planned = [&]() -> Status {
    SF_RETURN_IF_ERROR(moe::validate(problem));
    MoeOptions resolved;
    SF_RETURN_IF_ERROR(moe::resolve_options(options, &resolved));
    // The queries keep a reference to the problem they answer for: the GEMM's, at the plan's
    // rows (the instance depends on the format only, so the rows need not be exact here).
    const Problem gemm = moe::gemm_problem(problem, 1);
    decode::DeviceQueries q;
    SF_RETURN_IF_ERROR(decode::cuda_device_queries(gemm, device, &q));
    return moe::plan_moe(problem, q, device, sm_count, resolved, out);
  }();
  SF_CUDA_CHECK(cudaSetDevice(current));
  return planned;
}

}  // namespace sailfish
