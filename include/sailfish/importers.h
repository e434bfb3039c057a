// Importers from the checkpoint formats Sailfish serves into the canonical QuantizedWeight, each
// with its exporter so round trips can be tested. Host memory only; the GPU repack reads the same
// source layouts directly on the device (sailfish.h).
#pragma once

#include <cstdint>
#include <vector>

#include "sailfish/quantized_weight.h"

namespace sailfish {

// GPTQ (AutoGPTQ / GPTQModel) tensors.
//   qweight  int32 [k * bits / 32][n]: along K, element k at bits (k % (32/bits)) * bits of word
//            k / (32/bits) in column n.
//   qzeros   int32 [groups][n * bits / 32]: packed along N the same way. Absent for symmetric
//            checkpoints that carry none (then zero_kind is kNone).
//   scales   [groups][n] (float32 here; fp16 in checkpoints converts exactly).
//   g_idx    int32 [k] or empty.
// GPTQ-v1 checkpoints store zero points minus one (the "zero point offset" of the original
// AutoGPTQ code); v2 / GPTQModel store them as they are.
enum class GptqZeroConvention { kV1MinusOne, kV2Exact };

struct GptqTensors {
  int64_t k = 0, n = 0;
  int bits = 4;
  int group_size = 128;  // or kChannelwise
  std::vector<int32_t> qweight;
  std::vector<int32_t> qzeros;  // empty: symmetric
  std::vector<float> scales;
  std::vector<int32_t> g_idx;
  GptqZeroConvention zero_convention = GptqZeroConvention::kV1MinusOne;
};

// A weight whose stored zero points all equal the code bias is imported as kNone (symmetric).
Status import_gptq(const GptqTensors& in, QuantizedWeight* out);
// Writes qzeros for every weight (the code bias for kNone), like GPTQ checkpoints do.
// kFloat zero points cannot be expressed in GPTQ: an error.
Status export_gptq(const QuantizedWeight& in, GptqZeroConvention convention, GptqTensors* out);

// AWQ (AutoAWQ GEMM) tensors, 4-bit only.
//   qweight int32 [k][n / 8]: word j of row k holds columns 8j..8j+7 in AWQ's interleaved nibble
//           order: nibble i holds column 8j + {0, 2, 4, 6, 1, 3, 5, 7}[i].
//   qzeros  int32 [groups][n / 8], same interleaving. scales [groups][n].
struct AwqTensors {
  int64_t k = 0, n = 0;
  int group_size = 128;
  std::vector<int32_t> qweight;
  std::vector<int32_t> qzeros;
  std::vector<float> scales;
};
Status import_awq(const AwqTensors& in, QuantizedWeight* out);
Status export_awq(const QuantizedWeight& in, AwqTensors* out);

// ONNX Runtime com.microsoft::MatMulNBits tensors.
//   b            uint8 [n][k_blocks][blob], blob = block_size * bits / 8, k_blocks =
//                ceil(k / block_size); codes along K, the earliest element in the lowest bits.
//   scales       [n][k_blocks].
//   zero points  absent (2^(bits-1)); packed uint8 [n][ceil(k_blocks * bits / 8)] (earliest block
//                in the lowest bits); or typed [n][k_blocks] (may be fractional).
//   g_idx        int32 [k] (deprecated input): the scale / zero column of each k.
// K need not be a multiple of block_size: the tail of the last block is padding and is ignored.
struct MatMulNBitsTensors {
  int64_t k = 0, n = 0;
  int bits = 4;
  int block_size = 32;  // power of two, 16..256
  std::vector<uint8_t> b;
  std::vector<float> scales;
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  std::vector<uint8_t> zero_points_packed;  // kInteger
  std::vector<float> zero_points_typed;     // kFloat
  std::vector<int32_t> g_idx;

  int64_t k_blocks() const { return block_size > 0 ? ceil_div(k, block_size) : 0; }
  int64_t blob_bytes() const { return int64_t(block_size) * bits / 8; }
  int64_t packed_zero_bytes_per_row() const { return (k_blocks() * bits + 7) / 8; }
};
Status import_matmul_nbits(const MatMulNBitsTensors& in, QuantizedWeight* out);
// kInteger exports as packed uint8 zero points, kFloat as typed. Padding codes past k hold the
// weight's zero point code (the code bias when it is not an integer), as ORT's quantizer writes.
Status export_matmul_nbits(const QuantizedWeight& in, MatMulNBitsTensors* out);

}  // namespace sailfish
