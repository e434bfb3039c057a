// The GPU API: plan once per (problem, device), run many times.
//
//   Y[m][n] = A[m][k] . W[n][k]^T (+ bias[n]),  A and Y in the activation dtype (fp16 or bf16),
//   W a packed quantized weight resident on the device (packed_format.h, docs/FORMAT.md).
//
// plan() is pure host work (it reads device properties, never launches or allocates) and its
// result can be cached per M. run() never allocates, never synchronizes and is safe to capture in
// a CUDA graph; the caller owns the workspace (workspace_size()) and a Context (cuBLASLt handle).
// A may have any leading batch dimensions: pass m = their product.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sailfish/packed_format.h"
#include "sailfish/status.h"
#include "sailfish/types.h"

namespace sailfish {

// A packed weight on the device: non-owning views. Alignment: codes, scales and zero_fold 16 bytes,
// perm 4 bytes (validate(const DeviceWeight&)).
struct DeviceWeight {
  PackedGeometry geometry;
  DType scale_dtype = DType::kBF16;
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  const void* codes = nullptr;      // geometry.code_bytes()
  const void* scales = nullptr;     // [scale_rows][n_pad] of scale_dtype
  // [2][scale_rows][n_pad] u16: zero shifts (integers), then folds (scale_dtype), as
  // PackedWeight::zero_fold; or null for kNone.
  const void* zero_fold = nullptr;
  const int32_t* perm = nullptr;    // [k] act-order permutation, or null
};

// Checks a view before anything reads through it: the geometry is PackedGeometry::make's (derived
// fields included), the scale dtype fp16 or bf16, the zero kind none/integer/float with zero_fold
// set exactly when it has zero points, codes and scales non-null, codes, scales and zero_fold
// 16-byte aligned (the kernels copy them in 16-byte vectors; cudaMalloc'd and
// DeviceWeightStorage arrays are) and perm 4-byte aligned. run(), tune(), dequantize() and
// download() refuse a view that fails it, with this message after their own name.
Status validate(const DeviceWeight& weight);

// Copies a valid device weight's arrays back to the host (synchronous): codes, scales, zero_fold and
// perm. zero_points are not kept on the device, so they stay empty.
Status download(const DeviceWeight& weight, PackedWeight* host);

// Owns the device memory of one packed weight (cudaMalloc'd by upload, freed on destruction).
class DeviceWeightStorage {
 public:
  DeviceWeightStorage() = default;
  ~DeviceWeightStorage();
  DeviceWeightStorage(const DeviceWeightStorage&) = delete;
  DeviceWeightStorage& operator=(const DeviceWeightStorage&) = delete;
  DeviceWeightStorage(DeviceWeightStorage&& other) noexcept;
  DeviceWeightStorage& operator=(DeviceWeightStorage&& other) noexcept;

  // Allocates the buffers of a packed weight with this geometry (contents undefined).
  static Status allocate(const PackedGeometry& geometry, DType scale_dtype, ZeroPointKind zero_kind,
                         bool act_order, DeviceWeightStorage* out);
  // Allocates and copies a host packed weight (synchronous).
  static Status upload(const PackedWeight& host, DeviceWeightStorage* out);
  // Copies back to the host (synchronous); zero_points are not kept on the device, so the result
  // carries codes, scales, zero_fold and perm only.
  Status download(PackedWeight* host) const;

  const DeviceWeight& view() const { return view_; }
  DeviceWeight& mutable_view() { return view_; }
  size_t bytes() const { return bytes_; }

 private:
  void release();
  DeviceWeight view_;
  void* base_ = nullptr;  // one allocation holds every buffer
  size_t bytes_ = 0;
};

// Which kernel family computes the product.
enum class Tier : int {
  kAuto = 0,   // chosen from M and the shape by measured crossovers
  kDecode,     // mma.sync kernels for small M (memory-bound)
  kPrefill,    // Hopper wgmma + TMA kernels (compute-bound)
  kDense,      // dequantize into scratch, then cuBLASLt
};
const char* tier_name(Tier tier);

// Plan options. An unset field takes its SAILFISH_* environment variable (read at each plan()
// call, never cached), else the default. docs/CONFIG.md lists them all.
struct Options {
  std::optional<Tier> tier;                          // SAILFISH_TIER=auto|decode|prefill|dense
  std::optional<bool> deterministic;                 // SAILFISH_DETERMINISTIC=0|1 (default 0)
  // Batch invariance: a row's output bits independent of M (of what else is batched with it).
  // Every M runs the prefill tier (sm_90a) on one token width (prefill_tokens, default 64) at one
  // split depth chosen from the shape alone (prefill_splits, or the cost model's depth for one
  // token tile), Stream-K off. Slower where that plan does not suit M (decode-sized M most); an
  // error where the prefill tier cannot run, or with another tier or Stream-K forced. Dense
  // layers only: plan_moe ignores it. docs/DECODE.md, "Reproducibility".
  std::optional<bool> batch_invariant;               // SAILFISH_BATCH_INVARIANT=0|1 (default 0)
  // Decode split-K epilogue: red.global.add of 16-bit partial sums into Y instead of fp32
  // partials reduced in order. Rounds every partial to 16 bits (measured: up to ~3x the error of
  // a plain bf16 GEMM), so it is off by default; ignored in deterministic mode.
  std::optional<bool> atomic_epilogue;               // SAILFISH_ATOMIC_EPILOGUE=0|1 (default 0)
  // Launch decode and prefill kernels with programmatic dependent launch (Hopper), so they may
  // start while the previous kernel in the stream drains (decode starts its weight stream early).
  std::optional<bool> programmatic_dependent_launch;  // SAILFISH_PDL=0|1 (default 1)
  // Decode kernel for M <= 32 per CTA: warps split K (default) or the n16 groups of a strip.
  std::optional<bool> decode_warp_split;             // SAILFISH_DECODE_WARP_SPLIT=0|1 (default 1)
  // Decode split-K on sm_90: the split CTAs of a strip form a thread-block cluster and add their
  // partial sums through distributed shared memory (1), or write fp32 partials that a second
  // kernel reduces (0). Both sum in split order, so the results are bitwise identical.
  // SAILFISH_DECODE_CLUSTER_REDUCE=0|1 (default 1)
  std::optional<bool> decode_cluster_reduce;
  // Decode split-K depth instead of the occupancy heuristic (tuning and tests).
  std::optional<int64_t> decode_splits;              // SAILFISH_DECODE_SPLITS (default: auto)
  // Decode warp-split kernel's pipeline stages per warp (tuning and tests): 3 or 4 at 17-32 tokens
  // per CTA, 4 or 5 at 9-16 (int8: 4 only), 4 or 6 at 1-8 (int8 also 5). Any other value is an
  // error; a count the kernel for that M lacks is ignored (docs/CONFIG.md).
  std::optional<int64_t> decode_warp_stages;         // SAILFISH_DECODE_WARP_STAGES (default: auto)
  // Decode Stream-K grid (int4, 1-16 tokens per CTA, sm_90; src/decode/stream_k_grid.h): clusters
  // of CTAs walk flat runs over several strips, so every SM streams an even share. Opt-in: on the
  // H200 it ran 1.02-1.75x the split grid's time on every Llama-3 shape (docs/perf/decode.md, v18).
  // 1: wherever a Stream-K grid fits (decode_splits then sets the CTAs a cluster).
  std::optional<bool> decode_stream_k;               // SAILFISH_DECODE_STREAM_K=0|1 (default 0)
  // Strips per Stream-K cluster instead of the plan's choice (1-8; tuning and tests).
  std::optional<int64_t> decode_stream_k_strips;     // SAILFISH_DECODE_STREAM_K_STRIPS
  // Decode cluster epilogue, push form: each split CTA sends its sums of a fragment to the
  // fragment's owner CTA, which adds and stores, instead of all meeting at two cluster barriers.
  // Unset: wherever a 1-2 token-tile cluster's receive area leaves the grid's clusters resident at
  // once (docs/CONFIG.md; docs/perf/decode.md, v21-v22); 1: wherever a 1-2 token-tile cluster
  // epilogue can hold the area; 0: never.
  std::optional<bool> decode_cluster_push;           // SAILFISH_DECODE_CLUSTER_PUSH=0|1
  // Decode warp-split kernel: pad its shared memory so that an SM holds no more of its CTAs than
  // the grid's even share, ceil(CTAs / SMs) (src/decode/grid_placement.h, spread_shared_bytes). A
  // grid smaller than what the SMs hold can otherwise land unevenly, several CTAs on some SMs and
  // none on others, where programmatic dependent launch and clusters place it. Unset: where the
  // share is two or more and the grid is not uneven, or the share is one and each warp streams at
  // least 64 KB (grid_placement.h, spread_pays), and for the one-tile fallback's four clustered
  // splits; two token tiles may then take two clustered splits over the reduce kernel; 1: wherever
  // an SM would hold more than the share; 0: never (the plans before v46, docs/perf/decode.md).
  std::optional<bool> decode_spread;                 // SAILFISH_DECODE_SPREAD=0|1
  // Decode warp-split kernel at 1-8 tokens per CTA: eight warps a CTA instead of four, each with
  // half the k-blocks, on the same grid (src/decode/warp_split_instances.h, wide_warps_pay).
  // Unset: where the four-warp plan's warps stream long and the wide CTAs keep its grid resident
  // as before; 1: wherever it applies (the split grid) and fits an SM; 0: never.
  std::optional<bool> decode_wide_warps;             // SAILFISH_DECODE_WIDE_WARPS=0|1
  std::optional<int64_t> prefill_min_m;              // SAILFISH_PREFILL_MIN_M (default by bit
                                                     // width: src/api/dispatch_rules.h)
  std::optional<int64_t> prefill_max_m;              // SAILFISH_PREFILL_MAX_M (default 2048)
  std::optional<int64_t> prefill_splits;             // SAILFISH_PREFILL_SPLITS (default: auto)
  std::optional<int64_t> prefill_stages;             // SAILFISH_PREFILL_STAGES (default: auto)
  std::optional<int64_t> prefill_tokens;             // SAILFISH_PREFILL_TOKENS: 16, 32, 64, 128
                                                     // or 256 (default: cost model)
  // Prefill Stream-K grid (src/prefill/stream_k.h): the tiles' k-blocks split evenly over the
  // persistent CTAs, shared tiles summed by a fixup kernel. Unset: where the cost model prefers
  // it (one m tile only); 1: always (not with prefill_splits); 0: never.
  std::optional<bool> prefill_stream_k;              // SAILFISH_PREFILL_STREAM_K=0|1
  std::optional<int64_t> dense_min_m;                // SAILFISH_DENSE_MIN_M: auto tier uses dense
                                                     // from this M (default: measured table)
  std::optional<int64_t> dense_chunk_rows;           // SAILFISH_DENSE_CHUNK_ROWS (default 32768)
  std::optional<int64_t> dense_chunk_threshold_bytes;  // SAILFISH_DENSE_CHUNK_BYTES (256 MiB)
  std::optional<bool> dense_force_chunked;           // SAILFISH_DENSE_FORCE_CHUNKED (default 0)
};

// The problem a plan is made for.
struct Problem {
  int64_t m = 0;
  PackedGeometry geometry;  // the weight's
  DType scale_dtype = DType::kBF16;
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  bool act_order = false;
  DType act_dtype = DType::kBF16;  // activations and output; must equal scale_dtype
  bool has_bias = false;

  static Problem for_weight(const DeviceWeight& weight, int64_t m, DType act_dtype, bool has_bias);
};

// Decode-tier launch configuration (filled by plan(); see src/decode/config.h and the headers it
// includes).
struct DecodePlan {
  int token_tiles = 0;            // 8-token mma tiles per CTA (1, 2, 3, 4, 6 or 8)
  int m_groups = 0;               // CTAs along M (each 8 * token_tiles tokens)
  int splits = 0;                 // split-K depth
  int epilogue = 0;               // 0 store, 1 red.global into Y, 2 fp32 partials + ordered
                                  // reduce, 3 cluster reduce (src/decode/cluster_epilogue.h:
                                  // Epilogue)
  bool warp_split = false;        // warps split K inside the CTA (M <= 32) instead of N
  bool copy_activations = false;  // prep kernel writes an aligned (and permuted) copy of A
  bool init_output = false;       // prep kernel sets Y = bias before the red.global epilogue
  int warp_stage_bytes = 0;       // warp-split kernel: bytes of one pipeline stage
  int act_rows = 0;               // warp-split kernel: activation rows a stage holds
  int warp_stages = 0;            // warp-split kernel: pipeline stages per warp (3-6)
  int stream_k_strips = 0;        // warp-split kernel: Stream-K strips per cluster of `splits`
                                  // CTAs (src/decode/stream_k_grid.h), 0 for the split grid
  bool cluster_push = false;      // epilogue 3 by push: ranks send their sums of a fragment to
                                  // its owner rank, which adds and stores
                                  // (src/decode/cluster_epilogue.h)
  int warps = 4;                  // warp-split kernel: warps a CTA, 4 or 8 (one token tile:
                                  // Options::decode_wide_warps, src/decode/warp_split_instances.h)
  int spread_ctas = 0;            // shared memory padded so an SM holds at most this many CTAs,
                                  // the grid's even share (Options::decode_spread); 0: not padded
  int shared_bytes = 0;           // dynamic shared memory of the main kernel, per CTA
  int resident_ctas = 0;          // CTAs of the main kernel one SM holds at shared_bytes (the
                                  // occupancy query; spread_ctas where padded). For logs and
                                  // sweeps: what the plan's placement rules counted
  bool moe = false;               // the MoE instance: one sorted block of rows a CTA, on its
                                  // expert's weight (plan_moe, include/sailfish/moe_gpu.h)
  size_t activation_offset = 0;   // workspace offsets (bytes)
  size_t partials_offset = 0;
};

// Prefill-tier launch configuration (filled by plan(); see src/prefill/config.h).
struct PrefillPlan {
  int tokens = 0;                 // tokens per CTA tile (wgmma N): 16, 32, 64, 128 or 256
  int n_tiles = 0;                // 128-row weight tiles
  int m_tiles = 0;                // token tiles
  int splits = 0;                 // split-K depth (> 1: fp32 partials + ordered reduce)
  bool stream_k = false;          // Stream-K grid (splits 1; shared tiles through the fixup)
  int stages = 0;                 // pipeline depth
  int grid = 0;                   // persistent CTAs
  bool copy_activations = false;  // prep kernel writes an aligned (and permuted) copy of A
  size_t activation_offset = 0;   // workspace offsets (bytes)
  size_t partials_offset = 0;
};

struct Plan {
  Problem problem;
  Tier tier = Tier::kDense;
  bool deterministic = false;
  bool batch_invariant = false;  // Options::batch_invariant: the plan does not depend on M
  bool atomic_epilogue = false;  // decode split-K through red.global (never when deterministic)
  bool programmatic_dependent_launch = true;
  int device = 0;
  int sm_count = 0;
  // Dense tier: rows of W dequantized per chunk (== n_pad when not chunked).
  int64_t dense_chunk_rows = 0;
  DecodePlan decode;
  PrefillPlan prefill;
  size_t workspace_bytes = 0;
  std::string reason;  // why this tier: for logs and the bench
};

// device: a CUDA ordinal, or -1 for the current device.
Status plan(const Problem& problem, int device, const Options& options, Plan* out);
inline size_t workspace_size(const Plan& p) { return p.workspace_bytes; }

// Per-device state that run() needs and must not create itself (a cuBLASLt handle).
class Context {
 public:
  static Status create(int device, std::unique_ptr<Context>* out);
  ~Context();
  int device() const { return device_; }
  void* cublaslt_handle() const { return cublaslt_; }

 private:
  Context() = default;
  int device_ = 0;
  void* cublaslt_ = nullptr;
};

struct RunArgs {
  const void* a = nullptr;     // [m][k] act_dtype, row-major, 16-byte aligned
  const void* bias = nullptr;  // [n] act_dtype, or null (must match plan.problem.has_bias)
  void* y = nullptr;           // [m][n] act_dtype
  const DeviceWeight* weight = nullptr;
};

// Enqueues the product on stream. No allocation, no synchronization.
Status run(const Plan& plan, const RunArgs& args, void* workspace, size_t workspace_bytes,
           const Context& context, cudaStream_t stream);

// Dequantizes a whole packed weight into out[n_pad][ld] (ld >= k_pad, a multiple of 8; rows past n
// and columns past k are padding; act-order columns land at their
// input positions), in the weight's scale dtype: the dense tier's first step, for callers that
// want the fp16/bf16 weight itself. Enqueued on stream; no allocation, no synchronization.
Status dequantize(const DeviceWeight& weight, void* out, int64_t ld, cudaStream_t stream);

}  // namespace sailfish
