// MatMulNBitsOp: construction (import, pack, upload), the per-M plan cache, and run(), which for
// fp32 activations wraps the 16-bit product in the conversion kernels of convert.cu.
#include "sailfish/matmul_nbits.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "api/environment.h"
#include "common/cuda_check.h"
#include "matmul_nbits/convert.h"
#include "sailfish/importers.h"
#include "sailfish/packed_format.h"

namespace sailfish {

namespace {

// Plans are cheap host work, so a full cache is simply emptied: the bound only stops a process
// that sees ever new M values (varying sequence lengths) from growing without limit.
constexpr size_t kMaxCachedPlans = 256;

size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

bool aligned(const void* p, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// Makes `device` current for the guard's lifetime (load-time calls only; run() never switches).
class DeviceGuard {
 public:
  DeviceGuard() = default;
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() {
    if (switched_) cudaSetDevice(previous_);  // nothing useful to do with an error here
  }
  Status enter(int* device) {
    SF_CUDA_CHECK(cudaGetDevice(&previous_));
    if (*device < 0) *device = previous_;
    int count = 0;
    SF_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (*device >= count) {
      return invalid_argument("device ", *device, " does not exist; this process sees ", count,
                              " CUDA device(s)");
    }
    if (*device != previous_) {
      SF_CUDA_CHECK(cudaSetDevice(*device));
      switched_ = true;
    }
    return Status();
  }

 private:
  int previous_ = 0;
  bool switched_ = false;
};

// The schema's rules, as import_matmul_nbits applies them; checked here too so that
// create_from_serialized reports a bad node the same way before it reads any bytes.
Status check_attributes(const MatMulNBitsAttributes& a) {
  if (a.bits != 4 && a.bits != 8) {
    return invalid_argument("MatMulNBits bits is ", a.bits, "; accepted: 4 or 8");
  }
  const bool power_of_two = a.block_size > 0 && (a.block_size & (a.block_size - 1)) == 0;
  if (!power_of_two || a.block_size < 16 || a.block_size > 256) {
    return invalid_argument("MatMulNBits block_size is ", a.block_size,
                            "; accepted: a power of two in 16..256 (16, 32, 64, 128, 256)");
  }
  if (a.k <= 0 || a.n <= 0) {
    return invalid_argument("MatMulNBits shape is [N=", a.n, ", K=", a.k,
                            "]; both must be positive");
  }
  if (a.accuracy_level < 0 || a.accuracy_level > 4) {
    return invalid_argument("MatMulNBits accuracy_level is ", a.accuracy_level,
                            "; accepted: 0 (unset), 1 (fp32), 2 (fp16), 3 (bf16), 4 (int8)");
  }
  return Status();
}

Status check_a_dtype(DType a_dtype) {
  if (a_dtype != DType::kF16 && a_dtype != DType::kBF16 && a_dtype != DType::kF32) {
    return unsupported("MatMulNBits activation dtype ", static_cast<int>(a_dtype),
                       " is not supported; accepted: fp16, bf16, fp32");
  }
  return Status();
}

// Views -> the importer's owning tensors. The pointer of each tensor must be set exactly when
// its count is nonzero; the counts themselves are checked against the attributes by the importer.
Status gather(const MatMulNBitsAttributes& attributes, const MatMulNBitsWeights& w,
              MatMulNBitsTensors* t) {
  auto span = [](const char* name, const void* p, size_t count) -> Status {
    if (p == nullptr && count > 0) {
      return invalid_argument("MatMulNBits ", name, " is null but its size is ", count);
    }
    return Status();
  };
  if (w.b == nullptr) return invalid_argument("MatMulNBits input B is null");
  if (w.scales == nullptr) return invalid_argument("MatMulNBits input scales is null");
  SF_RETURN_IF_ERROR(span("zero_points (packed)", w.zero_points_packed,
                          w.zero_points_packed_bytes));
  SF_RETURN_IF_ERROR(span("zero_points (typed)", w.zero_points_typed, w.zero_points_typed_count));
  SF_RETURN_IF_ERROR(span("g_idx", w.g_idx, w.g_idx_count));
  switch (w.zero_kind) {
    case ZeroPointKind::kNone:
      if (w.zero_points_packed != nullptr || w.zero_points_typed != nullptr) {
        return invalid_argument("MatMulNBits zero_kind is none but a zero_points pointer is set");
      }
      break;
    case ZeroPointKind::kInteger:
      if (w.zero_points_packed == nullptr || w.zero_points_typed != nullptr) {
        return invalid_argument("MatMulNBits zero_kind is integer (packed uint8): set "
                                "zero_points_packed and leave zero_points_typed null");
      }
      break;
    case ZeroPointKind::kFloat:
      if (w.zero_points_typed == nullptr || w.zero_points_packed != nullptr) {
        return invalid_argument("MatMulNBits zero_kind is float (typed): set zero_points_typed "
                                "and leave zero_points_packed null");
      }
      break;
    default:
      return invalid_argument("MatMulNBits zero_kind ", static_cast<int>(w.zero_kind),
                              " is not none/integer/float");
  }
  t->k = attributes.k;
  t->n = attributes.n;
  t->bits = attributes.bits;
  t->block_size = attributes.block_size;
  t->zero_kind = w.zero_kind;
  t->b.assign(w.b, w.b + w.b_bytes);
  t->scales.assign(w.scales, w.scales + w.scales_count);
  if (w.zero_points_packed != nullptr) {
    t->zero_points_packed.assign(w.zero_points_packed,
                                 w.zero_points_packed + w.zero_points_packed_bytes);
  }
  if (w.zero_points_typed != nullptr) {
    t->zero_points_typed.assign(w.zero_points_typed,
                                w.zero_points_typed + w.zero_points_typed_count);
  }
  if (w.g_idx != nullptr) t->g_idx.assign(w.g_idx, w.g_idx + w.g_idx_count);
  return Status();
}

}  // namespace

DType matmul_nbits_compute_dtype(DType a_dtype, int accuracy_level) {
  switch (a_dtype) {
    case DType::kF16: return DType::kF16;
    case DType::kBF16: return DType::kBF16;
    case DType::kF32: return accuracy_level == 2 ? DType::kF16 : DType::kBF16;
  }
  return DType::kF32;
}

Status MatMulNBitsOp::create(const MatMulNBitsAttributes& attributes,
                             const MatMulNBitsWeights& weights, DType a_dtype,
                             const Options& options, int device,
                             std::unique_ptr<MatMulNBitsOp>* out) {
  if (out == nullptr) return invalid_argument("MatMulNBitsOp::create: out is null");
  SF_RETURN_IF_ERROR(check_attributes(attributes));
  SF_RETURN_IF_ERROR(check_a_dtype(a_dtype));
  MatMulNBitsTensors tensors;
  SF_RETURN_IF_ERROR(gather(attributes, weights, &tensors));
  PackedWeight packed;
  {
    // Scoped so the canonical copy is freed before the upload allocates.
    QuantizedWeight canonical;
    SF_RETURN_IF_ERROR(import_matmul_nbits(tensors, &canonical));
    tensors = MatMulNBitsTensors();
    SF_RETURN_IF_ERROR(
        pack(canonical, matmul_nbits_compute_dtype(a_dtype, attributes.accuracy_level), &packed));
  }
  return finish_create(attributes, a_dtype, options, device, std::move(packed), out);
}

Status MatMulNBitsOp::create_from_serialized(const uint8_t* data, size_t size,
                                             const MatMulNBitsAttributes& attributes,
                                             ZeroPointKind zero_kind, bool has_g_idx,
                                             DType a_dtype, const Options& options, int device,
                                             std::unique_ptr<MatMulNBitsOp>* out) {
  if (out == nullptr) return invalid_argument("MatMulNBitsOp::create_from_serialized: out is null");
  SF_RETURN_IF_ERROR(check_attributes(attributes));
  SF_RETURN_IF_ERROR(check_a_dtype(a_dtype));
  PackedExpectation expected;
  expected.n = attributes.n;
  expected.k = attributes.k;
  expected.bits = attributes.bits;
  expected.group_size = attributes.block_size;
  expected.zero_kind = zero_kind;
  expected.scale_dtype = matmul_nbits_compute_dtype(a_dtype, attributes.accuracy_level);
  expected.act_order = has_g_idx;
  PackedWeight packed;
  SF_RETURN_IF_ERROR(deserialize(data, size, expected, &packed));
  return finish_create(attributes, a_dtype, options, device, std::move(packed), out);
}

Status MatMulNBitsOp::finish_create(const MatMulNBitsAttributes& attributes, DType a_dtype,
                                    const Options& options, int device, PackedWeight packed,
                                    std::unique_ptr<MatMulNBitsOp>* out) {
  // Bad options or SAILFISH_* values fail here, at load, rather than at the first run.
  api::ResolvedOptions resolved;
  SF_RETURN_IF_ERROR(api::resolve_options(options, &resolved));
  DeviceGuard guard;
  SF_RETURN_IF_ERROR(guard.enter(&device));
  std::unique_ptr<MatMulNBitsOp> op(new MatMulNBitsOp());
  op->attributes_ = attributes;
  op->a_dtype_ = a_dtype;
  op->compute_dtype_ = packed.scale_dtype;
  op->options_ = options;
  op->device_ = device;
  SF_CUDA_CHECK(cudaDeviceGetAttribute(&op->sm_count_, cudaDevAttrMultiProcessorCount, device));
  SF_RETURN_IF_ERROR(DeviceWeightStorage::upload(packed, &op->storage_));
  SF_RETURN_IF_ERROR(Context::create(device, &op->context_));
  op->zero_points_ = std::move(packed.zero_points);
  *out = std::move(op);
  return Status();
}

MatMulNBitsOp::~MatMulNBitsOp() = default;

void MatMulNBitsOp::clear_plan_cache() {
  std::lock_guard<std::mutex> lock(plans_mutex_);
  plans_.clear();
  tuned_plans_.clear();
}

std::pair<int64_t, bool> MatMulNBitsOp::plan_key(int64_t m, bool has_bias) const {
  // fp32 activations: the bias is added by the output conversion, never by the 16-bit product.
  return {m, has_bias && a_dtype_ != DType::kF32};
}

Problem MatMulNBitsOp::problem_for(const std::pair<int64_t, bool>& key) const {
  return Problem::for_weight(storage_.view(), key.first, compute_dtype_, key.second);
}

Status MatMulNBitsOp::cached_plan(int64_t m, bool has_bias, std::shared_ptr<const Plan>* out) {
  const std::pair<int64_t, bool> key = plan_key(m, has_bias);
  {
    std::lock_guard<std::mutex> lock(plans_mutex_);
    auto tuned = tuned_plans_.find(key);
    if (tuned != tuned_plans_.end()) {
      *out = tuned->second;
      return Status();
    }
    auto it = plans_.find(key);
    if (it != plans_.end()) {
      *out = it->second;
      return Status();
    }
  }
  // Planned outside the lock (it reads the environment and device attributes); two threads
  // planning the same M at once get equal plans and one insertion wins.
  auto made = std::make_shared<Plan>();
  const Problem problem = problem_for(key);
  SF_RETURN_IF_ERROR(plan(problem, device_, options_, made.get()));
  std::lock_guard<std::mutex> lock(plans_mutex_);
  if (plans_.size() >= kMaxCachedPlans) plans_.clear();
  *out = plans_.emplace(key, std::move(made)).first->second;
  return Status();
}

Status MatMulNBitsOp::tune(int64_t m, bool has_bias, cudaStream_t stream,
                           const TuneOptions& tune_options, TuneReport* report) {
  if (m <= 0) {
    return invalid_argument("MatMulNBitsOp::tune: m is ", m,
                            "; must be >= 1 (an empty product has nothing to time)");
  }
  int device = device_;
  DeviceGuard guard;  // tune() allocates and creates its stream on the current device
  SF_RETURN_IF_ERROR(guard.enter(&device));
  const std::pair<int64_t, bool> key = plan_key(m, has_bias);
  const Problem problem = problem_for(key);
  auto tuned = std::make_shared<Plan>();
  SF_RETURN_IF_ERROR(sailfish::tune(problem, device_, options_, storage_.view(), *context_, stream,
                                    tune_options, tuned.get(), report));
  // run() calls holding the previous plan keep it alive until they return.
  std::lock_guard<std::mutex> lock(plans_mutex_);
  tuned_plans_[key] = std::move(tuned);
  return Status();
}

Status MatMulNBitsOp::plan_with(int64_t m, bool has_bias, const Options& options) {
  if (m < 0) return invalid_argument("MatMulNBitsOp::plan_with: m is ", m, "; must be >= 0");
  const std::pair<int64_t, bool> key = plan_key(m, has_bias);
  const Problem problem = problem_for(key);
  auto given = std::make_shared<Plan>();
  SF_RETURN_IF_ERROR(plan(problem, device_, options, given.get()));
  given->reason = "given options: " + given->reason;
  std::lock_guard<std::mutex> lock(plans_mutex_);
  tuned_plans_[key] = std::move(given);
  return Status();
}

Status MatMulNBitsOp::staging_bytes(int64_t m, size_t* bytes) const {
  *bytes = 0;
  if (a_dtype_ != DType::kF32) return Status();
  if (!matmul_nbits::f32_staging_bytes(m, attributes_.n, attributes_.k, bytes)) {
    return invalid_argument("MatMulNBitsOp: m is ", m, "; with fp32 activations the workspace "
                            "stages m x K (K = ", attributes_.k, ") and m x N (N = ",
                            attributes_.n, ") 16-bit elements, whose bytes must fit int64");
  }
  return Status();
}

Status MatMulNBitsOp::plan_for(int64_t m, bool has_bias, Plan* out) {
  if (out == nullptr) return invalid_argument("MatMulNBitsOp::plan_for: out is null");
  if (m < 0) return invalid_argument("MatMulNBitsOp: m is ", m, "; must be >= 0");
  std::shared_ptr<const Plan> p;
  SF_RETURN_IF_ERROR(cached_plan(m, has_bias, &p));
  *out = *p;
  return Status();
}

Status MatMulNBitsOp::workspace_size(int64_t m, bool has_bias, size_t* bytes) {
  if (bytes == nullptr) return invalid_argument("MatMulNBitsOp::workspace_size: bytes is null");
  if (m < 0) return invalid_argument("MatMulNBitsOp: m is ", m, "; must be >= 0");
  size_t staging = 0;
  SF_RETURN_IF_ERROR(staging_bytes(m, &staging));
  std::shared_ptr<const Plan> p;
  SF_RETURN_IF_ERROR(cached_plan(m, has_bias, &p));
  *bytes = align256(p->workspace_bytes) + staging;
  return Status();
}

Status MatMulNBitsOp::run(const void* a, int64_t m, const void* bias, void* y, void* workspace,
                          size_t workspace_bytes, cudaStream_t stream) {
  if (m < 0) return invalid_argument("MatMulNBitsOp::run: m is ", m, "; must be >= 0");
  if (m > 0 && (a == nullptr || y == nullptr)) {
    return invalid_argument("MatMulNBitsOp::run: A and Y must be non-null when m > 0");
  }
  const bool fp32 = a_dtype_ == DType::kF32;
  const uintptr_t alignment = fp32 ? 4 : 16;
  if (!aligned(a, alignment) || !aligned(y, alignment) || !aligned(bias, alignment)) {
    return invalid_argument("MatMulNBitsOp::run: A, Y and bias must be ", alignment,
                            "-byte aligned for ", dtype_name(a_dtype_), " activations");
  }
  size_t staging = 0;
  SF_RETURN_IF_ERROR(staging_bytes(m, &staging));
  std::shared_ptr<const Plan> p;
  SF_RETURN_IF_ERROR(cached_plan(m, bias != nullptr, &p));
  const size_t plan_bytes = align256(p->workspace_bytes);
  const size_t needed = plan_bytes + staging;
  if (workspace_bytes < needed || (needed > 0 && workspace == nullptr)) {
    return invalid_argument("MatMulNBitsOp::run: workspace has ", workspace_bytes,
                            " bytes; m = ", m, " needs ", needed, " (workspace_size)");
  }
  if (!aligned(workspace, 256)) {
    return invalid_argument("MatMulNBitsOp::run: workspace must be 256-byte aligned "
                            "(cudaMalloc memory is)");
  }
  if (m == 0) return Status();
  // The conversion kernels launch on the current device before sailfish::run checks it.
  int current = -1;
  SF_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device_) {
    return invalid_argument("MatMulNBitsOp::run: the current device is ", current,
                            " but the operator lives on device ", device_,
                            "; call cudaSetDevice first");
  }

  RunArgs args;
  args.weight = &storage_.view();
  if (!fp32) {
    args.a = a;
    args.bias = bias;
    args.y = y;
    return sailfish::run(*p, args, workspace, p->workspace_bytes, *context_, stream);
  }
  // fp32: [plan workspace][A in the compute type][Y in the compute type], each 256-aligned.
  char* base = static_cast<char*>(workspace);
  void* a16 = base + plan_bytes;
  void* y16 = base + plan_bytes + align256(static_cast<size_t>(m * attributes_.k) * 2);
  SF_RETURN_IF_ERROR(matmul_nbits::launch_f32_to_16(static_cast<const float*>(a), a16,
                                                    m * attributes_.k, compute_dtype_, sm_count_,
                                                    stream));
  args.a = a16;
  args.y = y16;
  SF_RETURN_IF_ERROR(sailfish::run(*p, args, workspace, p->workspace_bytes, *context_, stream));
  return matmul_nbits::launch_16_to_f32_bias(y16, compute_dtype_, static_cast<const float*>(bias),
                                             static_cast<float*>(y), m, attributes_.n, sm_count_,
                                             stream);
}

Status MatMulNBitsOp::save(std::vector<uint8_t>* out) const {
  if (out == nullptr) return invalid_argument("MatMulNBitsOp::save: out is null");
  int device = device_;
  DeviceGuard guard;
  SF_RETURN_IF_ERROR(guard.enter(&device));
  PackedWeight packed;
  SF_RETURN_IF_ERROR(storage_.download(&packed));
  packed.zero_points = zero_points_;
  return serialize(packed, out);
}

}  // namespace sailfish
