/* A small C ABI over the Sailfish host reference, for tests written in other languages (the ONNX
 * Runtime oracle loads it through Python ctypes). Every function returns 0 on success and nonzero
 * on failure; sf_last_error() then says why. Nothing throws across this boundary. */
#ifndef SAILFISH_C_API_H_
#define SAILFISH_C_API_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SF_C_API_VERSION 1

/* Return codes: SF_OK, or the sailfish::StatusCode value of the failure (1..5), or
 * SF_ERR_EXCEPTION when a C++ exception (allocation failure) was caught at the boundary. */
#define SF_OK 0
#define SF_ERR_EXCEPTION 100

/* How the MatMulNBits zero_points input is given. */
#define SF_ZP_NONE 0          /* absent: zero point 2^(bits-1) */
#define SF_ZP_PACKED_UINT8 1  /* uint8 [N][ceil(k_blocks * bits / 8)], earliest block lowest */
#define SF_ZP_TYPED_FLOAT 2   /* float [N][k_blocks], may be fractional */

int sf_c_api_version(void);

/* The message of the last failure on this thread ("" if none). Valid until the next call on it. */
const char* sf_last_error(void);

/* Y[m][N] = A[m][K] * W^T (+ bias) in double, where W is the MatMulNBits weight given by the raw
 * operator tensors: b uint8 [N][k_blocks][block_size * bits / 8], scales float [N][k_blocks],
 * zero points per zero_kind (the pointer of the other kind must be null), g_idx int32 [K] or null,
 * bias float [N] or null. The weight goes through import_matmul_nbits and reference_gemm. */
int sf_reference_matmul_nbits(int64_t k, int64_t n, int bits, int block_size, const uint8_t* b,
                              const float* scales, int zero_kind,
                              const uint8_t* zero_points_packed, const float* zero_points_typed,
                              const int32_t* g_idx, const float* bias, const double* a, int64_t m,
                              double* y);

/* W[N][K] in double (dequantize_reference) of the weight given as for sf_reference_matmul_nbits. */
int sf_dequantize_matmul_nbits(int64_t k, int64_t n, int bits, int block_size, const uint8_t* b,
                               const float* scales, int zero_kind,
                               const uint8_t* zero_points_packed, const float* zero_points_typed,
                               const int32_t* g_idx, double* w);

/* Imports the raw tensors (as above) with import_matmul_nbits and exports them back with
 * export_matmul_nbits into the *_out buffers, which have the same sizes as the inputs. The out
 * pointer of an absent input (zero points of another kind, g_idx) may be null. */
int sf_matmul_nbits_roundtrip(int64_t k, int64_t n, int bits, int block_size, const uint8_t* b,
                              const float* scales, int zero_kind,
                              const uint8_t* zero_points_packed, const float* zero_points_typed,
                              const int32_t* g_idx, uint8_t* b_out, float* scales_out,
                              uint8_t* zero_points_packed_out, float* zero_points_typed_out,
                              int32_t* g_idx_out);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* SAILFISH_C_API_H_ */
