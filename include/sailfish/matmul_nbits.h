// MatMulNBitsOp: ONNX Runtime's com.microsoft::MatMulNBits as one Sailfish operator.
//
//   Y[..., N] = A[..., K] . dequant(B)^T (+ bias[N])
//
// It takes the contrib op's inputs exactly as the schema defines them (importers.h describes each
// tensor), prepacks the weight once at construction (import_matmul_nbits -> pack -> upload) and
// runs every call through sailfish::plan / sailfish::run, so whichever tier plan() picks (or the
// caller forces) serves it, including tiers added after this operator was written.
// docs/MATMUL_NBITS.md is the user guide: dtypes, accuracy_level, differences from ONNX Runtime
// and the table of environment variables.
//
// Activation types and the compute type (matmul_nbits_compute_dtype):
//   fp16 A -> fp16 compute, bf16 A -> bf16 compute: A, bias and Y are used as they are.
//   fp32 A -> bf16 compute by default, fp16 with accuracy_level 2: run() converts A to the
//            compute type (round to nearest even) in the workspace, runs the 16-bit product
//            without bias, then writes Y in fp32 as float(Y16) + bias (bias stays fp32 and is
//            added in that same conversion kernel). Y therefore carries the 16-bit rounding of
//            A, of the dequantized weight and of the product: about 3 significant digits with
//            bf16 (unit roundoff 2^-8), 3.3 with fp16 (2^-11), not fp32 accuracy.
//
// Scales arrive as float32 host arrays; fp16 and bf16 checkpoint scales convert to float32
// exactly, and pack() rounds them once to the compute type (exact when they were of that type).
//
// Threads: create/save are load-time calls. run() and workspace_size() may be called from
// several threads at once (the per-M plan cache is locked; each concurrent run needs its own
// workspace). The operator is bound to the device it was created on: that device must be current
// when run() is called.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "sailfish/packed_serialize.h"
#include "sailfish/sailfish.h"
#include "sailfish/tune.h"

namespace sailfish {

// The node's attributes. weight_prepacked has no field: create_from_serialized() is its analogue.
struct MatMulNBitsAttributes {
  int64_t k = 0;
  int64_t n = 0;
  int bits = 4;             // 4 or 8
  int block_size = 32;      // power of two in 16..256
  int accuracy_level = 0;   // 0..4 as in the schema; see matmul_nbits_compute_dtype
};

// Host views of the constant inputs, with their element counts so that shapes are checked
// against the attributes (ORT checks tensor shapes the same way). Read during create() only.
struct MatMulNBitsWeights {
  const uint8_t* b = nullptr;  // [N][k_blocks][block_size * bits / 8]
  size_t b_bytes = 0;
  const float* scales = nullptr;  // [N][k_blocks]
  size_t scales_count = 0;
  ZeroPointKind zero_kind = ZeroPointKind::kNone;  // which zero_points form is given, if any
  const uint8_t* zero_points_packed = nullptr;     // kInteger: [N][ceil(k_blocks * bits / 8)]
  size_t zero_points_packed_bytes = 0;
  const float* zero_points_typed = nullptr;        // kFloat: [N][k_blocks]
  size_t zero_points_typed_count = 0;
  const int32_t* g_idx = nullptr;                  // [K], or null
  size_t g_idx_count = 0;
};

// The type the product is computed in for activations of type a_dtype: fp16 for fp16, bf16 for
// bf16; for fp32, fp16 when accuracy_level == 2 and bf16 otherwise (bf16 keeps fp32's range, so
// nothing that is finite in fp32 overflows; fp16 is 8x more precise but overflows past 65504).
// Returns kF32 (an invalid compute type) for an a_dtype that is not fp16, bf16 or fp32.
DType matmul_nbits_compute_dtype(DType a_dtype, int accuracy_level);

class MatMulNBitsOp {
 public:
  // Imports, packs (for the compute type) and uploads the weight on `device` (-1: the current
  // one), and creates the cuBLASLt context. Options are kept and apply to every plan.
  static Status create(const MatMulNBitsAttributes& attributes, const MatMulNBitsWeights& weights,
                       DType a_dtype, const Options& options, int device,
                       std::unique_ptr<MatMulNBitsOp>* out);

  // Loads the bytes save() wrote (packed_serialize.h) without repacking. zero_kind and has_g_idx
  // declare which optional inputs the node has; every header field must match them, the
  // attributes and the compute type of (a_dtype, accuracy_level), or this fails.
  static Status create_from_serialized(const uint8_t* data, size_t size,
                                       const MatMulNBitsAttributes& attributes,
                                       ZeroPointKind zero_kind, bool has_g_idx, DType a_dtype,
                                       const Options& options, int device,
                                       std::unique_ptr<MatMulNBitsOp>* out);

  MatMulNBitsOp(const MatMulNBitsOp&) = delete;
  MatMulNBitsOp& operator=(const MatMulNBitsOp&) = delete;
  ~MatMulNBitsOp();

  // Workspace bytes run() needs for m rows (the product of A's leading dimensions), with or
  // without a bias. Makes (and caches) the plan for m.
  Status workspace_size(int64_t m, bool has_bias, size_t* bytes);

  // The plan run() uses for m rows (made and cached on first use): which tier, why, workspace.
  Status plan_for(int64_t m, bool has_bias, Plan* out);

  // Measured planning (tune.h) for m rows: times plan()'s choice against its alternatives on
  // this operator's own weight and keeps the fastest for every later run(), plan_for() and
  // workspace_size() of (m, has_bias). A load-time call like sailfish::tune(): it allocates
  // weight copies, captures CUDA graphs and returns once its timing is done; it runs after the
  // work already queued on stream and does not use that stream otherwise. Tuned plans are kept
  // apart from the rule plans' bounded cache (it never evicts them); clear_plan_cache() drops
  // them too. For fp32 activations it times the 16-bit product alone: the conversions around it
  // are the same for every candidate.
  Status tune(int64_t m, bool has_bias, cudaStream_t stream,
              const TuneOptions& tune_options = TuneOptions(), TuneReport* report = nullptr);

  // Plans m rows with `options` in place of the operator's own and keeps that plan as tune()
  // keeps its own: to reinstall a choice saved from an earlier tuning (its TuneCandidate::options)
  // without timing again, so that every process runs the same launch (and, in deterministic mode,
  // gives bitwise the same output). The plan's reason starts "given options: ".
  Status plan_with(int64_t m, bool has_bias, const Options& options);

  // Y = A . W^T (+ bias), enqueued on stream: no allocation, no synchronization (CUDA-graph
  // safe once the plan for m is cached, e.g. by a workspace_size() call before capture).
  //   a     [m][K] of the activation type; y [m][N] of the activation type.
  //   bias  [N] of the activation type, or null.
  //   fp16/bf16: a, y and bias 16-byte aligned. fp32: 4-byte aligned (16 is faster).
  //   workspace: workspace_size(m, bias != nullptr) bytes, 256-byte aligned (cudaMalloc's).
  Status run(const void* a, int64_t m, const void* bias, void* y, void* workspace,
             size_t workspace_bytes, cudaStream_t stream);

  // The serialized prepacked weight (packed_serialize.h), read back from the device.
  // Synchronous (a load-time call).
  Status save(std::vector<uint8_t>* out) const;

  // Drops the cached plans, tuned ones included, so that the next run of each M plans again (and
  // reads the SAILFISH_* environment variables again).
  void clear_plan_cache();

  const MatMulNBitsAttributes& attributes() const { return attributes_; }
  DType activation_dtype() const { return a_dtype_; }
  DType compute_dtype() const { return compute_dtype_; }
  ZeroPointKind zero_kind() const { return storage_.view().zero_kind; }
  bool has_g_idx() const { return storage_.view().perm != nullptr; }
  int device() const { return device_; }
  const DeviceWeight& weight() const { return storage_.view(); }

 private:
  MatMulNBitsOp() = default;
  static Status finish_create(const MatMulNBitsAttributes& attributes, DType a_dtype,
                              const Options& options, int device, PackedWeight packed,
                              std::unique_ptr<MatMulNBitsOp>* out);
  // The plan cache's key: (m, whether the 16-bit product adds the bias).
  std::pair<int64_t, bool> plan_key(int64_t m, bool has_bias) const;
  // The problem the plan of a key solves: this operator's weight, m = key.first rows.
  Problem problem_for(const std::pair<int64_t, bool>& key) const;
  Status cached_plan(int64_t m, bool has_bias, std::shared_ptr<const Plan>* out);
  // Bytes of the fp32 staging buffers (A and Y in the compute type) for m rows; 0 for 16-bit A.
  // An error for an m whose staging sizes pass int64.
  Status staging_bytes(int64_t m, size_t* bytes) const;

  MatMulNBitsAttributes attributes_;
  DType a_dtype_ = DType::kF16;
  DType compute_dtype_ = DType::kF16;
  Options options_;
  int device_ = 0;
  int sm_count_ = 0;
  DeviceWeightStorage storage_;
  std::unique_ptr<Context> context_;
  // pack()'s float32 zero points: not on the device, kept so save() writes a complete weight.
  std::vector<float> zero_points_;

  mutable std::mutex plans_mutex_;
  std::map<std::pair<int64_t, bool>, std::shared_ptr<const Plan>> plans_;
  std::map<std::pair<int64_t, bool>, std::shared_ptr<const Plan>> tuned_plans_;
};

}  // namespace sailfish
