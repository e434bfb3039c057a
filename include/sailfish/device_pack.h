// GPU repack: builds a packed weight (packed_format.h) on the device from quantized tensors that
// are already there, in the canonical form or as a GPTQ, AWQ or MatMulNBits checkpoint stores
// them. The result equals, byte for byte (codes, scales, zero_fold, perm), what the CPU path
// produces from the same values on the host:
//
//   import_<format>(host tensors) -> pack(weight, scale_dtype) -> DeviceWeightStorage::upload
//
// so a loader can skip the host round trip. The tensor semantics are those of importers.h and
// quantized_weight.h; the structs below only say where each tensor lives and in which type.
//
// Contract of every pack_on_device overload:
//  * Load-time operation: the work is enqueued on `stream`, and the call synchronizes `stream`
//    before it returns, on success and on failure alike. With act-order (g_idx given) it also
//    synchronizes `stream` once before packing, to copy g_idx (k ints) to the host and sort it
//    there (act_order_permutation, which also checks the GPTQ balance rule); GPTQ with qzeros
//    synchronizes once more to learn whether the weight is symmetric.
//  * Memory: the peak on the device is the destination (exactly the bytes of
//    DeviceWeightStorage::allocate for the result) plus one 4-byte flag word; never a second copy
//    of the weight or of its scales. On the host: O(k) for g_idx and the permutation.
//  * The source tensors must be ready for work enqueued on `stream` (written by earlier work on
//    it, or by work the caller has made `stream` wait for); they are only read.
//  * Source pointers must be device-accessible (device memory of the current device, managed, or
//    mapped pinned host memory) and aligned to their element size; this is checked. Their extents
//    cannot be checked: each must hold at least the elements stated next to it.
//  * Errors: kInvalidArgument / kUnsupported for what the CPU importers and pack() refuse (shape,
//    bits, group size, dtype, null or host pointers, g_idx out of range or unbalanced, codes or
//    zero points out of range, non-finite scales or zero values: those last are found on the
//    device and reported after the sync), kCudaError for CUDA failures. *out is left untouched
//    on any error.
//  * scale_dtype (fp16 or bf16) is the packed scale type, the activation type the weight serves;
//    source scales in another type are rounded to it (round to nearest even) exactly as pack()
//    rounds the float32 canonical scales.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "sailfish/importers.h"
#include "sailfish/sailfish.h"
#include "sailfish/status.h"
#include "sailfish/types.h"

namespace sailfish {

// The canonical form (quantized_weight.h) with its arrays on the device.
struct DeviceCanonicalWeight {
  int64_t n = 0, k = 0;
  int bits = 4;
  int group_size = 128;               // 16, 32, 64, 128, 256 or kChannelwise
  const uint8_t* codes = nullptr;     // [n][k], one code per byte, each < 2^bits
  const void* scales = nullptr;       // [groups][n] of scales_dtype
  DType scales_dtype = DType::kF32;   // fp16, bf16 or fp32
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  const uint8_t* zero_codes = nullptr;  // [groups][n] when kInteger (each < 2^bits), else null
  const void* zero_values = nullptr;    // [groups][n] of zero_values_dtype when kFloat, else null
  DType zero_values_dtype = DType::kF32;
  const int32_t* g_idx = nullptr;       // [k] act-order groups, or null
};

// GPTQ (importers.h, GptqTensors).
struct DeviceGptqWeight {
  int64_t k = 0, n = 0;
  int bits = 4;
  int group_size = 128;               // or kChannelwise
  const int32_t* qweight = nullptr;   // [k * bits / 32][n]
  const int32_t* qzeros = nullptr;    // [groups][n * bits / 32], or null (symmetric)
  const void* scales = nullptr;       // [groups][n] of scales_dtype
  DType scales_dtype = DType::kF16;
  const int32_t* g_idx = nullptr;     // [k], or null; all zeros with kChannelwise is dropped
  GptqZeroConvention zero_convention = GptqZeroConvention::kV1MinusOne;
};

// AWQ GEMM, 4-bit (importers.h, AwqTensors).
struct DeviceAwqWeight {
  int64_t k = 0, n = 0;
  int group_size = 128;               // or kChannelwise
  const int32_t* qweight = nullptr;   // [k][n / 8], interleaved
  const int32_t* qzeros = nullptr;    // [groups][n / 8], interleaved
  const void* scales = nullptr;       // [groups][n] of scales_dtype
  DType scales_dtype = DType::kF16;
};

// ONNX Runtime MatMulNBits (importers.h, MatMulNBitsTensors).
struct DeviceMatMulNBitsWeight {
  int64_t k = 0, n = 0;
  int bits = 4;
  int block_size = 32;                        // power of two, 16..256
  const uint8_t* b = nullptr;                 // [n][k_blocks][block_size * bits / 8]
  const void* scales = nullptr;               // [n][k_blocks] of scales_dtype
  DType scales_dtype = DType::kF16;
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  const uint8_t* zero_points_packed = nullptr;  // kInteger: [n][ceil(k_blocks * bits / 8)]
  const void* zero_points_typed = nullptr;      // kFloat: [n][k_blocks] of zero_points_dtype
  DType zero_points_dtype = DType::kF16;
  const int32_t* g_idx = nullptr;               // [k], or null
};

// Same bytes as pack(w, scale_dtype) of the canonical weight w.
Status pack_on_device(const DeviceCanonicalWeight& weight, DType scale_dtype,
                      cudaStream_t stream, DeviceWeightStorage* out);
// Same bytes as import_gptq then pack. All-bias qzeros give a symmetric weight (kNone).
Status pack_on_device(const DeviceGptqWeight& weight, DType scale_dtype, cudaStream_t stream,
                      DeviceWeightStorage* out);
// Same bytes as import_awq then pack (always kInteger zero points).
Status pack_on_device(const DeviceAwqWeight& weight, DType scale_dtype, cudaStream_t stream,
                      DeviceWeightStorage* out);
// Same bytes as import_matmul_nbits then pack. Codes past k (block padding) are not read.
Status pack_on_device(const DeviceMatMulNBitsWeight& weight, DType scale_dtype,
                      cudaStream_t stream, DeviceWeightStorage* out);

}  // namespace sailfish
