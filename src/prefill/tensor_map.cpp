// cuTensorMapEncodeTiled through the runtime's driver entry point, so the library links only
// cudart (no -lcuda). Encoding is host work of about a microsecond; run() does it per call because
// the map holds the activation pointer.
#include "prefill/tensor_map.h"

#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <mutex>

#include "common/cuda_check.h"

namespace sailfish::prefill {

namespace {

Status encode_function(PFN_cuTensorMapEncodeTiled_v12000* out) {
  static std::once_flag once;
  static PFN_cuTensorMapEncodeTiled_v12000 function = nullptr;
  static cudaError_t error = cudaSuccess;
  static cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSuccess;
  std::call_once(once, [] {
    void* symbol = nullptr;
    error = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &symbol, 12000,
                                             cudaEnableDefault, &query);
    function = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(symbol);
  });
  SF_RETURN_IF_ERROR(detail::cuda_status(error, "cudaGetDriverEntryPointByVersion"));
  if (query != cudaDriverEntryPointSuccess || function == nullptr) {
    return unsupported("the CUDA driver does not provide cuTensorMapEncodeTiled (needs a driver "
                       "for CUDA 12.0 or newer); the prefill tier cannot run");
  }
  *out = function;
  return Status();
}

}  // namespace

Status make_activation_map(const void* base, int64_t rows, int64_t columns, int64_t ld,
                           DType dtype, int box_rows, CUtensorMap* out) {
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0) {
    return invalid_argument("prefill: activations must be 16-byte aligned for TMA");
  }
  if ((ld * 2) % 16 != 0) {
    return invalid_argument("prefill: the activation row stride (", ld,
                            " elements) must be a multiple of 8 elements for TMA");
  }
  if (box_rows < 1 || box_rows > 256 || rows < 1 || columns < 1) {
    return internal_error("prefill: bad activation map [", rows, " x ", columns, "], box rows ",
                          box_rows);
  }
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  SF_RETURN_IF_ERROR(encode_function(&encode));
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld * 2)};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result = encode(
      out, dtype == DType::kF16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
      2, const_cast<void*>(base), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    return Status(StatusCode::kCudaError,
                  detail::concat("cuTensorMapEncodeTiled failed with CUresult ", int(result),
                                 " for activations [", rows, " x ", columns, "], ld ", ld));
  }
  return Status();
}

}  // namespace sailfish::prefill
