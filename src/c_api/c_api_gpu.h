/* GPU entry points of the Sailfish C ABI (libsailfish_c, CUDA builds): the MatMulNBits operator
 * (include/sailfish/matmul_nbits.h) for tests written in other languages; the conformance test
 * tests/oracle/test_matmul_nbits_gpu.py drives it through Python ctypes.
 *
 * Conventions are those of c_api.h: 0 (SF_OK) on success, else the sailfish::StatusCode of the
 * failure (1 invalid argument, 2 unsupported, 3 CUDA, 4 cuBLAS, 5 internal) or 100 for a C++
 * exception stopped at the boundary; sf_gpu_last_error() then says why. Host buffers in and out:
 * each call copies to and from the device and synchronizes (test convenience, not speed). */
#ifndef SAILFISH_C_API_GPU_H_
#define SAILFISH_C_API_GPU_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Activation dtypes (a_dtype). */
#define SF_GPU_A_F16 0
#define SF_GPU_A_BF16 1
#define SF_GPU_A_F32 2

/* Tiers (tier): the values of sailfish::Tier, or SF_GPU_FROM_ENV to leave the option unset so
 * that SAILFISH_TIER (or the default, auto) decides. force_chunked takes 0, 1 or SF_GPU_FROM_ENV
 * (SAILFISH_DENSE_FORCE_CHUNKED); chunk_rows takes a row count >= 64, or 0 for
 * SAILFISH_DENSE_CHUNK_ROWS / the default. */
#define SF_GPU_FROM_ENV (-1)
#define SF_GPU_TIER_AUTO 0
#define SF_GPU_TIER_DECODE 1
#define SF_GPU_TIER_PREFILL 2
#define SF_GPU_TIER_DENSE 3

/* 1 when this process sees at least one CUDA device, else 0. Never fails. */
int sf_gpu_available(void);

/* The message of the last failure of an sf_gpu_* call on this thread ("" if none). */
const char* sf_gpu_last_error(void);

typedef struct sf_gpu_matmul_nbits_op sf_gpu_matmul_nbits_op;

/* Creates the operator on the current device from the raw MatMulNBits tensors: b uint8
 * [N][k_blocks][block_size * bits / 8], scales float [N][k_blocks], zero points per zero_kind
 * (SF_ZP_* of c_api.h; the pointer of the other kind must be null), g_idx int32 [K] or null.
 * Their sizes follow from the attributes. */
int sf_gpu_matmul_nbits_create(int64_t k, int64_t n, int bits, int block_size,
                               int accuracy_level, const uint8_t* b, const float* scales,
                               int zero_kind, const uint8_t* zero_points_packed,
                               const float* zero_points_typed, const int32_t* g_idx, int a_dtype,
                               int tier, int force_chunked, int64_t chunk_rows,
                               sf_gpu_matmul_nbits_op** out);

/* Creates it from the bytes sf_gpu_matmul_nbits_save wrote, declaring the node's attributes and
 * which optional inputs it has (zero_kind, has_g_idx); any mismatch is an error. */
int sf_gpu_matmul_nbits_create_from_serialized(const uint8_t* data, size_t size, int64_t k,
                                               int64_t n, int bits, int block_size,
                                               int accuracy_level, int zero_kind, int has_g_idx,
                                               int a_dtype, int tier, int force_chunked,
                                               int64_t chunk_rows, sf_gpu_matmul_nbits_op** out);

/* The serialized prepacked weight. With buffer null (or capacity too small) only *size is set
 * (and a too small capacity fails with SF invalid argument); call again with a buffer. */
int sf_gpu_matmul_nbits_save(const sf_gpu_matmul_nbits_op* op, uint8_t* buffer, size_t capacity,
                             size_t* size);

/* y[m][N] = a[m][K] . W^T (+ bias[N]). a, bias and y are float host arrays; a and bias are
 * rounded to nearest even to the activation dtype first (exact for values already of that type)
 * and y is the device output converted to float (exact). bias may be null. *tier_used (may be
 * null) receives the sailfish::Tier that ran. */
int sf_gpu_matmul_nbits_run(sf_gpu_matmul_nbits_op* op, const float* a, int64_t m,
                            const float* bias, float* y, int* tier_used);

/* Measured planning for m >= 1 rows, with a bias or without (has_bias 0 or 1): times the plan
 * run() would use against its alternatives on this operator's weight and keeps the fastest for
 * every later sf_gpu_matmul_nbits_run of that m and bias presence (MatMulNBitsOp::tune,
 * include/sailfish/tune.h). launches and rounds are TuneOptions' (0 keeps its default). A
 * load-time call: it allocates weight copies, captures CUDA graphs and synchronizes. Each output
 * may be null: *candidates the number of candidate plans, *us_per_call the chosen one's median
 * time (0 where plan()'s choice was the only candidate: it is kept untimed), chosen_label its
 * label ("rule", "decode splits=3", "decode splits=1 stages=5", "prefill rule"), NUL-terminated
 * and cut to label_capacity - 1 bytes. */
int sf_gpu_matmul_nbits_tune(sf_gpu_matmul_nbits_op* op, int64_t m, int has_bias, int launches,
                             int rounds, int* candidates, double* us_per_call, char* chosen_label,
                             size_t label_capacity);

/* The plan sf_gpu_matmul_nbits_run uses for m >= 0 rows and bias presence (made and cached if
 * it is not yet): *tier (may be null) the sailfish::Tier, reason (may be null) why it was chosen
 * ("tuned: ..." after a tuning), NUL-terminated and cut to reason_capacity - 1 bytes;
 * *reason_size (may be null) the reason's full length, without the NUL. */
int sf_gpu_matmul_nbits_plan(sf_gpu_matmul_nbits_op* op, int64_t m, int has_bias, int* tier,
                             char* reason, size_t reason_capacity, size_t* reason_size);

void sf_gpu_matmul_nbits_destroy(sf_gpu_matmul_nbits_op* op);

/* create + run + destroy in one call. */
int sf_gpu_matmul_nbits(int64_t k, int64_t n, int bits, int block_size, int accuracy_level,
                        const uint8_t* b, const float* scales, int zero_kind,
                        const uint8_t* zero_points_packed, const float* zero_points_typed,
                        const int32_t* g_idx, const float* bias, const float* a, int64_t m,
                        int a_dtype, int tier, int force_chunked, int64_t chunk_rows, float* y);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* SAILFISH_C_API_GPU_H_ */
