// MoE problems and plans on the CPU model of the H200 (tests/model), shared by the MoE planner
// tests (moe_plan_test.cpp, planner_input_limits_test.cpp).
#pragma once

#include <cstdint>

#include "decode_gpu_model.h"
#include "moe/plan_moe.h"
#include "sailfish/moe_gpu.h"

namespace sailfish::testing {

// A layer of `experts` experts of n x k, group 128, top_k of them per token, `local` on this rank.
inline MoeProblem moe_problem(int64_t tokens, int top_k, int experts, int local, int64_t n,
                              int64_t k, int bits, ZeroPointKind zero, DType dtype,
                              const MoeGemm& gemm) {
  MoeProblem p;
  p.tokens = tokens;
  p.top_k = top_k;
  p.experts = experts;
  p.local_experts = local;
  EXPECT_TRUE(PackedGeometry::make(n, k, bits, 128, &p.geometry).ok());
  p.zero_kind = zero;
  p.scale_dtype = p.act_dtype = dtype;
  p.gemm = gemm;
  return p;
}

// Plans on the model: the queries answer for the GEMM's decode problem.
inline Status plan_on_model(const test::DecodeGpuModel& model, const MoeProblem& p,
                            const MoeOptions& options, MoePlan* out) {
  const Problem gemm = moe::gemm_problem(p, 1);
  return moe::plan_moe(p, model.queries(gemm), 0, model.sm_count, options, out);
}

}  // namespace sailfish::testing
