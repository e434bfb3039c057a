#include "cublas_baseline.h"

#include "common/cuda_check.h"

namespace sailfish::bench {

namespace {
constexpr size_t kWorkspaceBytes = size_t(32) << 20;
}

CublasDense::~CublasDense() {
  release_descriptors();
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

void CublasDense::release_descriptors() {
  if (op_ != nullptr) cublasLtMatmulDescDestroy(op_);
  if (w_layout_ != nullptr) cublasLtMatrixLayoutDestroy(w_layout_);
  if (a_layout_ != nullptr) cublasLtMatrixLayoutDestroy(a_layout_);
  if (y_layout_ != nullptr) cublasLtMatrixLayoutDestroy(y_layout_);
  op_ = nullptr;
  w_layout_ = a_layout_ = y_layout_ = nullptr;
  prepared_ = false;
}

Status CublasDense::create(DType dtype, std::unique_ptr<CublasDense>* out) {
  if (dtype != DType::kBF16 && dtype != DType::kF16) {
    return invalid_argument("CublasDense: dtype must be bf16 or fp16");
  }
  std::unique_ptr<CublasDense> c(new CublasDense());
  c->dtype_ = dtype;
  SF_CUBLAS_CHECK(cublasLtCreate(&c->handle_));
  SF_RETURN_IF_ERROR(c->workspace_.allocate(kWorkspaceBytes));
  *out = std::move(c);
  return Status();
}

Status CublasDense::prepare(int64_t m, int64_t n, int64_t k, const void* bias) {
  release_descriptors();
  const cudaDataType_t type = dtype_ == DType::kBF16 ? CUDA_R_16BF : CUDA_R_16F;
  // cuBLASLt is column-major. Row-major y[m][n] is column-major Y' (n x m), and
  //   Y' = W' . X'  with  W' = op_T(w as column-major k x n)  and  X' = x as column-major k x m,
  // so the weight is operand A (transposed) and the activations operand B (not transposed).
  SF_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  SF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &transa,
                                                 sizeof(transa)));
  SF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &transb,
                                                 sizeof(transb)));
  if (bias != nullptr) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;  // bias of length rows(Y') = n
    SF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                   &epilogue, sizeof(epilogue)));
    SF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                   sizeof(bias)));
  }
  SF_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&w_layout_, type, static_cast<uint64_t>(k),
                                             static_cast<uint64_t>(n), k));
  SF_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, type, static_cast<uint64_t>(k),
                                             static_cast<uint64_t>(m), k));
  SF_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&y_layout_, type, static_cast<uint64_t>(n),
                                             static_cast<uint64_t>(m), n));

  cublasLtMatmulPreference_t pref = nullptr;
  SF_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const size_t ws = workspace_.bytes();
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasLtMatmulAlgoGetHeuristic(handle_, op_, w_layout_, a_layout_, y_layout_, y_layout_,
                                        pref, 1, &result, &found);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  SF_RETURN_IF_ERROR(detail::cublas_status(st, "cublasLtMatmulAlgoGetHeuristic"));
  if (found == 0) {
    return unsupported("cuBLASLt has no algorithm for m=", m, " n=", n, " k=", k);
  }
  algo_ = result.algo;
  prepared_ = true;
  return Status();
}

Status CublasDense::enqueue(const void* a, const void* w, void* y, cudaStream_t stream) const {
  if (!prepared_) return internal_error("CublasDense::enqueue before prepare");
  const float alpha = 1.0f, beta = 0.0f;
  SF_CUBLAS_CHECK(cublasLtMatmul(handle_, op_, &alpha, w, w_layout_, a, a_layout_, &beta, y,
                                 y_layout_, y, y_layout_, &algo_, workspace_.get(),
                                 workspace_.bytes(), stream));
  return Status();
}

}  // namespace sailfish::bench
