// Dense tier configuration: constants shared by the dequantization kernel and its launcher.
#pragma once

#include <algorithm>
#include <cstdint>

namespace sailfish::dense {

// One CTA of 4 warps dequantizes one 64 x 64 packed block at a time; warp j owns n16 group j,
// so each lane reads its own contiguous 16-byte (int4) or 32-byte (int8) run of the block.
constexpr int kThreads = 128;
constexpr int kTileRows = 64;
constexpr int kTileCols = 64;
// Shared-memory row stride in elements. 64 + 8: a row is 144 bytes = 36 words, so the 8 rows a
// warp stores at once start in banks 0, 4, ..., 28 and the 4 lanes of a row fill the gaps: the
// 32-bit fragment stores are conflict-free, and 144 is a multiple of 16 so rows stay 16-byte
// aligned for the vector read-back. (An unpadded 128-byte stride puts all 8 rows in one bank.)
constexpr int kTileStride = kTileCols + 8;
// Blocks each CTA dequantizes per loop step (each with its own tile); the next step's runs are
// loaded before the current step is processed.
constexpr int kBlocksPerStep = 2;
constexpr int kSharedBytes = kBlocksPerStep * kTileRows * kTileStride * 2;
static_assert(kSharedBytes == 18432, "two 64 x 72 tiles of 16-bit values");
// CTAs per SM the launcher aims for: 16 x 128 threads fills an SM; with two steps of two blocks
// in flight per CTA that is 64 blocks (128-256 KB) of loads per SM, well past the DRAM
// latency-bandwidth product (about 20 KB per SM on an H200).
constexpr int kCtasPerSm = 16;

// Scratch rows default for the N-chunked variant (ONNX Runtime's MatMulNBits defaults).
constexpr int64_t kDefaultChunkRows = 32768;
constexpr int64_t kDefaultChunkThresholdBytes = int64_t(256) << 20;
// The rows of W dequantized at a time: all n_pad rows, or `chunk_rows` rounded up to a multiple of
// 64 when chunking is forced, or when the whole scratch (n_pad x k_pad 16-bit values) would pass
// `threshold_bytes` and N spans more than two chunks (ONNX Runtime's MatMulNBits rule). chunk_rows
// is clamped to n_pad before it is rounded: the option takes any value from 64 up, and rounding
// INT64_MAX up (or doubling it) overflowed; a chunk of n_pad rows or more is the whole N either way,
// so the clamp changes no plan.
inline int64_t dense_rows_per_chunk(int64_t n_pad, int64_t k_pad, int64_t chunk_rows,
                                    int64_t threshold_bytes, bool force_chunked) {
  const int64_t chunk = (std::min(chunk_rows, n_pad) + 63) / 64 * 64;
  const bool chunked = force_chunked || (n_pad * k_pad * 2 > threshold_bytes && n_pad > 2 * chunk);
  return chunked ? std::min(chunk, n_pad) : n_pad;
}

// cuBLASLt workspace carved from the caller's workspace.
constexpr int64_t kCublasWorkspaceBytes = int64_t(32) << 20;

}  // namespace sailfish::dense
