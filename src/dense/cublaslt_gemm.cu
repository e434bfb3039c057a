// Dense tier, step 2: the product on the dequantized scratch weight through cuBLASLt, with the
// bias fused as its epilogue. Descriptors live on the stack (the *Init forms of the cuBLASLt
// API), so a call allocates nothing and can be captured in a CUDA graph.
//
// Row-major Y[m][n] = A[m][k] . W[n][k]^T is, in cuBLAS's column-major terms,
//   C (n x m, ld = ld_y) = op_T(W as k x n, ld = ld_w) . (A as k x m, ld = k),
// and the bias (length n) runs down C's rows, which is what CUBLASLT_EPILOGUE_BIAS adds. A
// transposed scratch Wt[k][n] is W as n x k column-major (ld = ld_w), used without op_T.
#include "common/cuda_check.h"
#include "dense/launch.h"

namespace sailfish::dense {

Status cublaslt_gemm(void* cublaslt_handle, const DenseGemmArgs& args, cudaStream_t stream) {
  auto handle = static_cast<cublasLtHandle_t>(cublaslt_handle);
  const cudaDataType_t type = args.dtype == DType::kF16 ? CUDA_R_16F : CUDA_R_16BF;

  cublasLtMatmulDescOpaque_t desc_storage;
  auto desc = reinterpret_cast<cublasLtMatmulDesc_t>(&desc_storage);
  SF_CUBLAS_CHECK(cublasLtMatmulDescInit(desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans = args.w_transposed ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t no_trans = CUBLAS_OP_N;
  SF_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
  SF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans,
                                                 sizeof(no_trans)));
  if (args.bias != nullptr) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    SF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                   &epilogue, sizeof(epilogue)));
    SF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                   &args.bias, sizeof(args.bias)));
    SF_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                   &type, sizeof(type)));
  }

  cublasLtMatrixLayoutOpaque_t w_storage, a_storage, c_storage;
  auto w_layout = reinterpret_cast<cublasLtMatrixLayout_t>(&w_storage);
  auto a_layout = reinterpret_cast<cublasLtMatrixLayout_t>(&a_storage);
  auto c_layout = reinterpret_cast<cublasLtMatrixLayout_t>(&c_storage);
  if (args.w_transposed) {
    SF_CUBLAS_CHECK(cublasLtMatrixLayoutInit(w_layout, type, args.cols, args.k, args.ld_w));
  } else {
    SF_CUBLAS_CHECK(cublasLtMatrixLayoutInit(w_layout, type, args.k, args.cols, args.ld_w));
  }
  SF_CUBLAS_CHECK(cublasLtMatrixLayoutInit(a_layout, type, args.k, args.m, args.k));
  SF_CUBLAS_CHECK(cublasLtMatrixLayoutInit(c_layout, type, args.cols, args.m, args.ld_y));

  cublasLtMatmulPreferenceOpaque_t pref_storage;
  auto pref = reinterpret_cast<cublasLtMatmulPreference_t>(&pref_storage);
  SF_CUBLAS_CHECK(cublasLtMatmulPreferenceInit(pref));
  const uint64_t max_workspace = args.cublas_workspace_bytes;
  SF_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace, sizeof(max_workspace)));
  cublasLtMatmulHeuristicResult_t heuristic;
  int found = 0;
  SF_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, desc, w_layout, a_layout, c_layout,
                                                 c_layout, pref, 1, &heuristic, &found));
  if (found == 0) {
    return Status(StatusCode::kCublasError,
                  detail::concat("cuBLASLt found no algorithm for m=", args.m, " n=", args.cols,
                                 " k=", args.k, " (", dtype_name(args.dtype), ")"));
  }
  const float alpha = 1.0f, beta = 0.0f;
  SF_CUBLAS_CHECK(cublasLtMatmul(handle, desc, &alpha, args.w_chunk, w_layout, args.a, a_layout,
                                 &beta, args.y, c_layout, args.y, c_layout, &heuristic.algo,
                                 args.cublas_workspace, args.cublas_workspace_bytes, stream));
  return Status();
}

}  // namespace sailfish::dense
