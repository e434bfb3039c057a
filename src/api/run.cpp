// run(): checks the call against its plan, then enqueues the chosen tier. No allocation, no
// synchronization: safe inside CUDA graph capture.
#include <cuda_runtime_api.h>

#include "common/cuda_check.h"
#include "decode/launch.h"
#include "dense/config.h"
#include "dense/launch.h"
#include "prefill/launch.h"
#include "sailfish/sailfish.h"

namespace sailfish {

namespace {

bool misaligned(const void* p, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes != 0;
}

Status validate_run(const Plan& plan, const RunArgs& args, void* workspace,
                    size_t workspace_bytes, const Context& context) {
  const Problem& p = plan.problem;
  if (args.weight == nullptr) return invalid_argument("run: weight is null");
  const DeviceWeight& w = *args.weight;
  if (Status valid = validate(w); !valid.ok()) {
    return Status(valid.code(), "run: " + valid.message());
  }
  // Every geometry field, not only the four a plan is made from: validate() holds the view's
  // derived fields to make()'s, but the kernels take n_pad, k_blocks and scale_rows from the plan's
  // problem, which the caller could have edited since plan().
  if (!same_geometry(w.geometry, p.geometry) || w.scale_dtype != p.scale_dtype ||
      w.zero_kind != p.zero_kind || (w.perm != nullptr) != p.act_order) {
    return invalid_argument("run: the weight [n=", w.geometry.n, ", k=", w.geometry.k,
                            ", bits=", w.geometry.bits, ", group=", w.geometry.group_size,
                            ", scales ", dtype_name(w.scale_dtype), ", zero ",
                            zero_point_kind_name(w.zero_kind), ", act_order ", w.perm != nullptr,
                            "] does not match the plan's [n=", p.geometry.n, ", k=", p.geometry.k,
                            ", bits=", p.geometry.bits, ", group=", p.geometry.group_size,
                            ", scales ", dtype_name(p.scale_dtype), ", zero ",
                            zero_point_kind_name(p.zero_kind), ", act_order ", p.act_order, "]");
  }
  if (p.m > 0 && (args.a == nullptr || args.y == nullptr)) {
    return invalid_argument("run: a and y must be non-null when m > 0");
  }
  // The epilogues store Y and read the bias by element (pairs only where aligned), and the prep
  // kernel reads A by element: an element-misaligned pointer would fault. The tiers that read A in
  // place in 16-byte vectors check that alignment themselves.
  const uintptr_t elem = static_cast<uintptr_t>(dtype_bytes(p.act_dtype));
  if (misaligned(args.a, elem) || misaligned(args.y, elem) || misaligned(args.bias, elem)) {
    return invalid_argument("run: a, y and bias must be aligned to their element size (",
                            elem, " bytes for ", dtype_name(p.act_dtype), ")");
  }
  if ((args.bias != nullptr) != p.has_bias) {
    return invalid_argument("run: the plan was made ", p.has_bias ? "with" : "without",
                            " a bias but the call passes ", args.bias ? "one" : "none");
  }
  if (workspace_bytes < plan.workspace_bytes || (plan.workspace_bytes > 0 && workspace == nullptr)) {
    return invalid_argument("run: workspace has ", workspace_bytes, " bytes; the plan needs ",
                            plan.workspace_bytes, " (workspace_size(plan))");
  }
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0) {
    return invalid_argument("run: workspace must be 256-byte aligned (cudaMalloc memory is)");
  }
  if (context.device() != plan.device) {
    return invalid_argument("run: the context is for device ", context.device(),
                            " but the plan for device ", plan.device);
  }
  int current = -1;
  SF_CUDA_CHECK(cudaGetDevice(&current));
  if (current != plan.device) {
    return invalid_argument("run: the current device is ", current, " but the plan is for ",
                            plan.device, "; call cudaSetDevice first");
  }
  return Status();
}

Status run_dense(const Plan& plan, const RunArgs& args, void* workspace, const Context& context,
                 cudaStream_t stream) {
  const Problem& p = plan.problem;
  const PackedGeometry& g = p.geometry;
  const int64_t chunk = plan.dense_chunk_rows;
  char* scratch = static_cast<char*>(workspace);
  const size_t scratch_bytes = (static_cast<size_t>(chunk * g.k_pad * 2) + 255) / 256 * 256;
  void* cublas_workspace = scratch + scratch_bytes;
  const int elem = dtype_bytes(p.act_dtype);
  // Act-order weights dequantize transposed, [k][chunk] (dense/dequantize_kernel.cuh).
  const bool transposed = args.weight->perm != nullptr;
  const int64_t ld_w = transposed ? chunk : g.k_pad;
  for (int64_t row = 0; row < g.n; row += chunk) {
    const int64_t rows = std::min(chunk, g.n_pad - row);
    SF_RETURN_IF_ERROR(
        dense::launch_dequantize(*args.weight, row, rows, scratch, ld_w, plan.sm_count, stream));
    dense::DenseGemmArgs gemm;
    gemm.a = args.a;
    gemm.m = p.m;
    gemm.k = g.k;
    gemm.w_chunk = scratch;
    gemm.ld_w = ld_w;
    gemm.w_transposed = transposed;
    gemm.bias = args.bias ? static_cast<const char*>(args.bias) + row * elem : nullptr;
    gemm.y = static_cast<char*>(args.y) + row * elem;
    gemm.cols = std::min(chunk, g.n - row);
    gemm.ld_y = g.n;
    gemm.dtype = p.act_dtype;
    gemm.cublas_workspace = cublas_workspace;
    gemm.cublas_workspace_bytes = static_cast<size_t>(dense::kCublasWorkspaceBytes);
    SF_RETURN_IF_ERROR(dense::cublaslt_gemm(context.cublaslt_handle(), gemm, stream));
  }
  return Status();
}

}  // namespace

Status run(const Plan& plan, const RunArgs& args, void* workspace, size_t workspace_bytes,
           const Context& context, cudaStream_t stream) {
  SF_RETURN_IF_ERROR(validate_run(plan, args, workspace, workspace_bytes, context));
  if (plan.problem.m == 0) return Status();
  switch (plan.tier) {
    case Tier::kDense: return run_dense(plan, args, workspace, context, stream);
    case Tier::kDecode: return decode::run_decode(plan, args, workspace, stream);
    case Tier::kPrefill: return prefill::run_prefill(plan, args, workspace, stream);
    default:
      return internal_error("run: plan has tier ", tier_name(plan.tier), " which is not built");
  }
}

}  // namespace sailfish
