#include "moe/moe_check.h"

#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "common/cuda_check.h"
#include "nonfinite_scan.h"

namespace sailfish::bench {

Status check_moe(const MoePlan& plan, const MoeRunArgs& run, const MoeRouting& routing,
                 void* workspace, size_t workspace_bytes, int samples, uint64_t seed,
                 cudaStream_t stream, CheckResult* result) {
  if (run.experts == nullptr || result == nullptr) {
    return invalid_argument("check_moe: run.experts and result must be set");
  }
  if (!routing.expert_map.empty()) {
    return invalid_argument("check_moe: routings with an expert map are not checked here");
  }
  if (plan.problem.has_bias) return invalid_argument("check_moe: a bias is not checked here");
  SF_RETURN_IF_ERROR(validate(routing));
  const MoeGemm& gemm = plan.problem.gemm;
  const DeviceExperts& experts = *run.experts;
  const PackedGeometry& g = experts.geometry;
  const DType dtype = plan.problem.act_dtype;
  const int64_t out_rows = gemm.output_rows(routing);
  const int64_t in_rows = gemm.input_rows(routing);
  if (run.routing.tokens != routing.tokens || run.routing.top_k != routing.top_k) {
    return invalid_argument("check_moe: the host routing (", routing.tokens, " tokens, top ",
                            routing.top_k, ") is not the one run uses (", run.routing.tokens,
                            ", top ", run.routing.top_k, ")");
  }

  SF_RETURN_IF_ERROR(poison_output(run.y, out_rows * g.n, stream));
  SF_RETURN_IF_ERROR(run_moe(plan, run, workspace, workspace_bytes, stream));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  NonfiniteScanner scanner;
  SF_RETURN_IF_ERROR(scanner.init());
  SF_RETURN_IF_ERROR(scanner.count(run.y, out_rows * g.n, dtype, stream, &result->nonfinite));
  if (result->nonfinite > 0) {
    result->passed = false;
    result->detail = std::to_string(result->nonfinite) + " of " + std::to_string(out_rows * g.n) +
                     " output elements are NaN/Inf (never written, or non-finite)";
  }

  // Each sample's terms: (choice, sample) per expert, so that one expert at a time is fetched.
  CheckTarget target;
  target.a = run.a;
  target.y = run.y;
  target.m = out_rows;
  target.n = g.n;
  target.k = g.k;
  target.dtype = dtype;
  const std::vector<Sample> picked = pick_samples(out_rows, g.n, samples, seed);
  std::map<int, std::vector<std::pair<int64_t, size_t>>> terms;
  std::vector<int64_t> a_rows_wanted;
  for (size_t i = 0; i < picked.size(); ++i) {
    const int64_t first =
        gemm.output == MoeOutput::kTokenSum ? picked[i].m * routing.top_k : picked[i].m;
    const int64_t count = gemm.output == MoeOutput::kTokenSum ? routing.top_k : 1;
    for (int64_t c = first; c < first + count; ++c) {
      terms[routing.topk_ids[static_cast<size_t>(c)]].push_back({c, i});
      a_rows_wanted.push_back(gemm.input == MoeInput::kToken ? c / routing.top_k : c);
    }
  }
  if (in_rows > 0 && run.a == nullptr) return invalid_argument("check_moe: run.a is null");
  std::map<int64_t, std::vector<double>> a_rows;
  SF_RETURN_IF_ERROR(gather_rows(run.a, g.k, dtype, a_rows_wanted, &a_rows));
  std::vector<double> y;
  SF_RETURN_IF_ERROR(gather_outputs(target, picked, &y));

  std::vector<double> ref(picked.size(), 0.0), squares(picked.size(), 0.0);
  for (const auto& [expert, expert_terms] : terms) {
    PackedWeight weight;
    SF_RETURN_IF_ERROR(download_expert(experts, expert, &weight));
    for (const auto& [choice, sample] : expert_terms) {
      const int64_t a_row = gemm.input == MoeInput::kToken ? choice / routing.top_k : choice;
      const double scale =
          gemm.apply_router_weights ? routing.topk_weights[static_cast<size_t>(choice)] : 1.0;
      double dot = 0.0, l2 = 0.0;
      packed_column_dot(weight, a_rows[a_row], picked[sample].n, &dot, &l2);
      ref[sample] += scale * dot;
      squares[sample] += scale * scale * l2 * l2;
    }
  }
  for (size_t i = 0; i < picked.size(); ++i) {
    judge_sample(target, picked[i], y[i], ref[i], std::sqrt(squares[i]), result);
  }
  return Status();
}

}  // namespace sailfish::bench
