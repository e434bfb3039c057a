// plan(): validation, tier choice and workspace sizing. Pure host work: it reads device
// attributes but launches and allocates nothing, so a Plan can be cached per (problem, device).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "api/decode_choices.h"
#include "api/dispatch_rules.h"
#include "api/environment.h"
#include "common/cuda_check.h"
#include "common/host_math.h"
#include "decode/launch.h"
#include "dense/config.h"
#include "prefill/batch_invariant.h"
#include "prefill/launch.h"
#include "sailfish/sailfish.h"

namespace sailfish {

namespace {

// Auto dispatch, from the H200 measurements in docs/perf/ (int4 g128 bf16, Llama-3 shapes):
//   M <  prefill_min_m            decode; the default depends on the bit width
//                                 (api/dispatch_rules.h: 33 for int4, 17 for int8);
//   M <= prefill_max_m (2048)     prefill: faster than dense on 8 of 8 shapes at M = 128-512, 7
//                                 of 8 at 1024 and at 2048;
//   above                         dense: it won on all 8 shapes at M = 4096 and 8192, by
//                                 2.5-10% (docs/perf/prefill.md).
// Where prefill cannot run (off sm_90, or a build without sm_90a code), decode serves M below
// dense_min_m (65: at M = 64 it beat dense on 6 of 8 shapes, at 128 lost on all 8,
// docs/perf/dense.md) and dense the rest. dense_min_m also caps decode when prefill can run.
constexpr int64_t kDefaultDenseMinM = 65;
constexpr int64_t kDefaultPrefillMaxM = 2048;

using ::sailfish::detail::align_up;

Status validate_problem(const Problem& p) {
  if (p.m < 0) return invalid_argument("m is ", p.m, "; must be >= 0");
  const PackedGeometry& g = p.geometry;
  if (Status valid = validate(g); !valid.ok()) {
    return Status(valid.code(), "problem: " + valid.message());
  }
  if (p.act_dtype != DType::kF16 && p.act_dtype != DType::kBF16) {
    return unsupported("activation dtype ", dtype_name(p.act_dtype),
                       " is not supported; accepted: fp16, bf16");
  }
  if (p.scale_dtype != p.act_dtype) {
    return invalid_argument("the weight was packed with ", dtype_name(p.scale_dtype),
                            " scales but activations are ", dtype_name(p.act_dtype),
                            "; pack the weight with scale dtype ", dtype_name(p.act_dtype));
  }
  if (p.zero_kind != ZeroPointKind::kNone && p.zero_kind != ZeroPointKind::kInteger &&
      p.zero_kind != ZeroPointKind::kFloat) {
    return invalid_argument("zero kind ", int(p.zero_kind), " is not none/integer/float");
  }
  if (p.act_order && g.group_size == kChannelwise) {
    return invalid_argument("act-order needs a group size; the weight is channelwise");
  }
  return Status();
}

// Dense tier: chunk along N when the full scratch would exceed the threshold and N spans more than
// two chunks (ONNX Runtime's MatMulNBits rule, same defaults), or when forced.
void plan_dense(const api::ResolvedOptions& options, Plan* plan) {
  const PackedGeometry& g = plan->problem.geometry;
  plan->dense_chunk_rows =
      dense::dense_rows_per_chunk(g.n_pad, g.k_pad, options.dense_chunk_rows,
                                  options.dense_chunk_threshold_bytes, options.dense_force_chunked);
  // chunk x k_pad elements either way: [chunk][k_pad], or [k][chunk] transposed for act-order.
  plan->workspace_bytes =
      align_up(static_cast<size_t>(plan->dense_chunk_rows * g.k_pad * 2), 256) +
      static_cast<size_t>(dense::kCublasWorkspaceBytes);
}

// Options::batch_invariant: the prefill tier at one token width and one split depth for every M,
// Stream-K off (prefill/batch_invariant.h says why that fixes a row's bits).
Status plan_batch_invariant(const api::ResolvedOptions& r, int device, Plan* p) {
  if (r.tier != Tier::kAuto && r.tier != Tier::kPrefill) {
    return invalid_argument("batch_invariant runs the prefill tier at every M, but tier ",
                            tier_name(r.tier), " was forced; accepted with it: auto or prefill");
  }
  if (r.prefill_stream_k.value_or(false)) {
    return invalid_argument(
        "batch_invariant with prefill_stream_k = 1: a Stream-K grid cuts K by "
        "the tile count, which follows M; leave prefill_stream_k unset or 0");
  }
  if (const Status prefill = prefill::prefill_available(device); !prefill.ok()) {
    return unsupported("batch_invariant needs the prefill tier (sm_90 with sm_90a kernels): ",
                       prefill.message());
  }
  const int64_t tokens = r.prefill_tokens.value_or(prefill::kBatchInvariantTokens);
  const int64_t splits = r.prefill_splits.value_or(
      prefill::batch_invariant_splits(p->problem.geometry, p->sm_count, static_cast<int>(tokens)));
  p->tier = Tier::kPrefill;
  p->batch_invariant = true;
  p->reason = detail::concat("batch_invariant: prefill at ", tokens, "-token tiles and ", splits,
                             " split(s) for every m");
  return prefill::plan_prefill(tokens, splits, r.prefill_stages, false, p);
}

}  // namespace

const char* tier_name(Tier tier) {
  switch (tier) {
    case Tier::kAuto: return "auto";
    case Tier::kDecode: return "decode";
    case Tier::kPrefill: return "prefill";
    case Tier::kDense: return "dense";
  }
  return "unknown-tier";
}

Problem Problem::for_weight(const DeviceWeight& weight, int64_t m, DType act_dtype,
                            bool has_bias) {
  Problem p;
  p.m = m;
  p.geometry = weight.geometry;
  p.scale_dtype = weight.scale_dtype;
  p.zero_kind = weight.zero_kind;
  p.act_order = weight.perm != nullptr;
  p.act_dtype = act_dtype;
  p.has_bias = has_bias;
  return p;
}

Status plan(const Problem& problem, int device, const Options& options, Plan* out) {
  if (out == nullptr) return invalid_argument("plan: out is null");
  SF_RETURN_IF_ERROR(validate_problem(problem));
  api::ResolvedOptions resolved;
  SF_RETURN_IF_ERROR(api::resolve_options(options, &resolved));

  Plan p;
  p.problem = problem;
  p.deterministic = resolved.deterministic;
  p.atomic_epilogue = resolved.atomic_epilogue && !resolved.deterministic;
  p.programmatic_dependent_launch = resolved.programmatic_dependent_launch;
  if (device < 0) SF_CUDA_CHECK(cudaGetDevice(&device));
  int device_count = 0;
  SF_CUDA_CHECK(cudaGetDeviceCount(&device_count));
  if (device >= device_count) {
    return invalid_argument("device ", device, " does not exist; this process sees ",
                            device_count, " CUDA device(s)");
  }
  p.device = device;
  SF_CUDA_CHECK(cudaDeviceGetAttribute(&p.sm_count, cudaDevAttrMultiProcessorCount, device));

  if (resolved.batch_invariant) {
    SF_RETURN_IF_ERROR(plan_batch_invariant(resolved, device, &p));
    *out = std::move(p);
    return Status();
  }
  const int64_t dense_min_m = resolved.dense_min_m.value_or(kDefaultDenseMinM);
  switch (resolved.tier) {
    case Tier::kPrefill:
      SF_RETURN_IF_ERROR(prefill::prefill_available(device));
      p.tier = Tier::kPrefill;
      p.reason = "forced";
      break;
    case Tier::kDecode:
      p.tier = Tier::kDecode;
      p.reason = "forced";
      break;
    case Tier::kDense:
      p.tier = Tier::kDense;
      p.reason = "forced";
      break;
    case Tier::kAuto: {
      const PackedGeometry& g = problem.geometry;
      const int64_t prefill_min_m =
          resolved.prefill_min_m.value_or(api::default_prefill_min_m(g.bits));
      const int64_t prefill_max_m = resolved.prefill_max_m.value_or(kDefaultPrefillMaxM);
      const Status prefill = prefill::prefill_available(device);
      const std::string unavailable =
          prefill.ok() ? "" : detail::concat("; prefill unavailable: ", prefill.message());
      if (problem.m < dense_min_m && (!prefill.ok() || problem.m < prefill_min_m)) {
        p.tier = Tier::kDecode;
        p.reason = prefill.ok() ? detail::concat("auto: m ", problem.m, " < prefill_min_m ",
                                                 prefill_min_m)
                                : detail::concat("auto: m ", problem.m, " < dense_min_m ",
                                                 dense_min_m, unavailable);
      } else if (prefill.ok() && problem.m <= prefill_max_m) {
        p.tier = Tier::kPrefill;
        p.reason = detail::concat("auto: ", std::min(prefill_min_m, dense_min_m), " <= m ",
                                  problem.m, " <= prefill_max_m ", prefill_max_m);
      } else {
        p.tier = Tier::kDense;
        p.reason = prefill.ok() ? detail::concat("auto: m ", problem.m, " > prefill_max_m ",
                                                 prefill_max_m)
                                : detail::concat("auto: m ", problem.m, " >= dense_min_m ",
                                                 dense_min_m, unavailable);
      }
      break;
    }
  }
  if (p.tier == Tier::kDecode) {
    SF_RETURN_IF_ERROR(decode::plan_decode(api::decode_choices(resolved), &p));
  } else if (p.tier == Tier::kPrefill) {
    SF_RETURN_IF_ERROR(prefill::plan_prefill(resolved.prefill_tokens, resolved.prefill_splits,
                                              resolved.prefill_stages,
                                              resolved.prefill_stream_k, &p));
  } else {
    plan_dense(resolved, &p);
  }
  *out = std::move(p);
  return Status();
}

}  // namespace sailfish
