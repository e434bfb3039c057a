// The GPU half of the C ABI (c_api_gpu.h): MatMulNBitsOp behind an opaque handle, with host
// buffers converted, uploaded and downloaded here. Like c_api.cpp, every entry point turns a
// Status into a return code plus a thread-local message and stops exceptions at the boundary.
#include "c_api/c_api_gpu.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "c_api/c_api.h"
#include "c_api/c_api_error.h"
#include "common/cuda_check.h"
#include "sailfish/matmul_nbits.h"
#include "sailfish/quantize.h"

struct sf_gpu_matmul_nbits_op {
  std::unique_ptr<sailfish::MatMulNBitsOp> op;
};

namespace {

using sailfish::DType;
using sailfish::MatMulNBitsAttributes;
using sailfish::MatMulNBitsOp;
using sailfish::Options;
using sailfish::Status;
using sailfish::ZeroPointKind;

int report(const Status& status) {
  std::string& message = sailfish::c_api::thread_last_error();
  if (status.ok()) {
    message.clear();
    return SF_OK;
  }
  message = status.to_string();
  return static_cast<int>(status.code());
}

template <typename Body>
int guarded(Body&& body) {
  try {
    return report(body());
  } catch (const std::exception& e) {
    sailfish::c_api::thread_last_error() = std::string("exception: ") + e.what();
  } catch (...) {
    sailfish::c_api::thread_last_error() = "unknown exception";
  }
  return SF_ERR_EXCEPTION;
}

// A device allocation freed on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  Status allocate(size_t bytes) {
    if (bytes > 0) SF_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    return Status();
  }
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

Status a_dtype_of(int value, DType* out) {
  switch (value) {
    case SF_GPU_A_F16: *out = DType::kF16; return Status();
    case SF_GPU_A_BF16: *out = DType::kBF16; return Status();
    case SF_GPU_A_F32: *out = DType::kF32; return Status();
    default:
      // Passed through so that the operator itself reports the unsupported type.
      *out = static_cast<DType>(value);
      return Status();
  }
}

Status zero_kind_of(int value, ZeroPointKind* out) {
  switch (value) {
    case SF_ZP_NONE: *out = ZeroPointKind::kNone; return Status();
    case SF_ZP_PACKED_UINT8: *out = ZeroPointKind::kInteger; return Status();
    case SF_ZP_TYPED_FLOAT: *out = ZeroPointKind::kFloat; return Status();
    default:
      return sailfish::invalid_argument("zero_kind is ", value,
                                        "; accepted: 0 (none), 1 (packed uint8), 2 (typed float)");
  }
}

Status options_of(int tier, int force_chunked, int64_t chunk_rows, Options* out) {
  Options o;
  if (tier != SF_GPU_FROM_ENV) {
    if (tier < SF_GPU_TIER_AUTO || tier > SF_GPU_TIER_DENSE) {
      return sailfish::invalid_argument("tier is ", tier, "; accepted: -1 (environment), 0 auto, "
                                        "1 decode, 2 prefill, 3 dense");
    }
    o.tier = static_cast<sailfish::Tier>(tier);
  }
  if (force_chunked != SF_GPU_FROM_ENV) {
    if (force_chunked != 0 && force_chunked != 1) {
      return sailfish::invalid_argument("force_chunked is ", force_chunked,
                                        "; accepted: -1 (environment), 0, 1");
    }
    o.dense_force_chunked = force_chunked == 1;
  }
  if (chunk_rows != 0) o.dense_chunk_rows = chunk_rows;
  *out = o;
  return Status();
}

MatMulNBitsAttributes attributes_of(int64_t k, int64_t n, int bits, int block_size,
                                    int accuracy_level) {
  MatMulNBitsAttributes a;
  a.k = k;
  a.n = n;
  a.bits = bits;
  a.block_size = block_size;
  a.accuracy_level = accuracy_level;
  return a;
}

// The sizes of the operator's tensors, derived from the attributes. Only sane attributes give
// sizes; otherwise they stay 0 and the operator reports the bad attribute itself. Sane includes
// products that fit in int64 (as the host C API's attributes_sane): one that overflows is
// undefined behaviour, and a wrapped count would have the operator copy the wrong number of the
// caller's bytes before it could refuse the shape.
struct TensorSizes {
  int64_t b_bytes = 0, scales_count = 0, zero_points_packed_bytes = 0;
};
bool tensor_sizes(int64_t k, int64_t n, int bits, int block_size, TensorSizes* out) {
  if (!(k > 0 && n > 0 && (bits == 4 || bits == 8) && block_size >= 16 && block_size <= 256)) {
    return false;
  }
  const int64_t k_blocks = (k + block_size - 1) / block_size;  // k > 0: no overflow
  const int64_t blob_bytes = int64_t(block_size) * bits / 8;
  const int64_t packed_zero_row = (k_blocks * bits + 7) / 8;    // k_blocks <= k < 2^63 / 8
  int64_t row_bytes = 0;
  return !__builtin_mul_overflow(k_blocks, blob_bytes, &row_bytes) &&
         !__builtin_mul_overflow(n, row_bytes, &out->b_bytes) &&
         !__builtin_mul_overflow(n, k_blocks, &out->scales_count) &&
         !__builtin_mul_overflow(n, packed_zero_row, &out->zero_points_packed_bytes);
}

Status create_op(int64_t k, int64_t n, int bits, int block_size, int accuracy_level,
                 const uint8_t* b, const float* scales, int zero_kind,
                 const uint8_t* zero_points_packed, const float* zero_points_typed,
                 const int32_t* g_idx, int a_dtype, int tier, int force_chunked,
                 int64_t chunk_rows, std::unique_ptr<MatMulNBitsOp>* out) {
  DType dtype;
  SF_RETURN_IF_ERROR(a_dtype_of(a_dtype, &dtype));
  Options options;
  SF_RETURN_IF_ERROR(options_of(tier, force_chunked, chunk_rows, &options));
  sailfish::MatMulNBitsWeights w;
  SF_RETURN_IF_ERROR(zero_kind_of(zero_kind, &w.zero_kind));
  w.b = b;
  w.scales = scales;
  w.zero_points_packed = zero_points_packed;
  w.zero_points_typed = zero_points_typed;
  w.g_idx = g_idx;
  TensorSizes sizes;
  if (tensor_sizes(k, n, bits, block_size, &sizes)) {
    w.b_bytes = b ? static_cast<size_t>(sizes.b_bytes) : 0;
    w.scales_count = scales ? static_cast<size_t>(sizes.scales_count) : 0;
    w.zero_points_packed_bytes =
        zero_points_packed ? static_cast<size_t>(sizes.zero_points_packed_bytes) : 0;
    w.zero_points_typed_count = zero_points_typed ? static_cast<size_t>(sizes.scales_count) : 0;
    w.g_idx_count = g_idx ? static_cast<size_t>(k) : 0;
  }
  return MatMulNBitsOp::create(attributes_of(k, n, bits, block_size, accuracy_level), w, dtype,
                               options, -1, out);
}

// Host float -> the activation type's bytes (round to nearest even for 16-bit types).
std::vector<uint8_t> to_device_type(const float* values, size_t count, DType dtype) {
  std::vector<uint8_t> bytes(count * static_cast<size_t>(sailfish::dtype_bytes(dtype)));
  if (dtype == DType::kF32) {
    if (count > 0) std::memcpy(bytes.data(), values, count * 4);
    return bytes;
  }
  for (size_t i = 0; i < count; ++i) {
    const uint16_t v = sailfish::float_to_bits(values[i], dtype);
    std::memcpy(bytes.data() + 2 * i, &v, 2);
  }
  return bytes;
}

void from_device_type(const std::vector<uint8_t>& bytes, DType dtype, float* out) {
  if (dtype == DType::kF32) {
    if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
    return;
  }
  for (size_t i = 0; i < bytes.size() / 2; ++i) {
    uint16_t v;
    std::memcpy(&v, bytes.data() + 2 * i, 2);
    out[i] = sailfish::bits_to_float(v, dtype);
  }
}

Status upload(const std::vector<uint8_t>& host, DeviceBuffer* device) {
  SF_RETURN_IF_ERROR(device->allocate(host.size()));
  if (!host.empty()) {
    SF_CUDA_CHECK(cudaMemcpy(device->get(), host.data(), host.size(), cudaMemcpyHostToDevice));
  }
  return Status();
}

Status run_op(MatMulNBitsOp& op, const float* a, int64_t m, const float* bias, float* y,
              int* tier_used) {
  if (m < 0) return sailfish::invalid_argument("m is ", m, "; must be >= 0");
  if (m > 0 && (a == nullptr || y == nullptr)) {
    return sailfish::invalid_argument("a and y must be non-null when m > 0");
  }
  const DType dtype = op.activation_dtype();
  const int64_t k = op.attributes().k, n = op.attributes().n;
  // The host copies hold m * k and m * n elements of up to 4 bytes: refuse an m whose sizes do
  // not fit before anything is allocated (a wrapped size would copy the wrong bytes).
  int64_t a_count = 0, y_count = 0, largest_copy_bytes = 0;
  if (__builtin_mul_overflow(m, k, &a_count) || __builtin_mul_overflow(m, n, &y_count) ||
      __builtin_mul_overflow(std::max(a_count, y_count), int64_t(4), &largest_copy_bytes)) {
    return sailfish::invalid_argument("m is ", m, "; m * k (k = ", k, ") and m * n (n = ", n,
                                      ") elements must fit in 64-bit byte counts");
  }
  sailfish::Plan plan;
  SF_RETURN_IF_ERROR(op.plan_for(m, bias != nullptr, &plan));
  if (tier_used != nullptr) *tier_used = static_cast<int>(plan.tier);
  size_t workspace_bytes = 0;
  SF_RETURN_IF_ERROR(op.workspace_size(m, bias != nullptr, &workspace_bytes));

  int previous = 0;
  SF_CUDA_CHECK(cudaGetDevice(&previous));
  SF_CUDA_CHECK(cudaSetDevice(op.device()));
  Status status = [&]() -> Status {
    DeviceBuffer d_a, d_bias, d_y, d_workspace;
    SF_RETURN_IF_ERROR(upload(to_device_type(a, static_cast<size_t>(m * k), dtype), &d_a));
    if (bias != nullptr) {
      SF_RETURN_IF_ERROR(upload(to_device_type(bias, static_cast<size_t>(n), dtype), &d_bias));
    }
    std::vector<uint8_t> y_bytes(static_cast<size_t>(m * n * sailfish::dtype_bytes(dtype)));
    SF_RETURN_IF_ERROR(d_y.allocate(y_bytes.size()));
    SF_RETURN_IF_ERROR(d_workspace.allocate(workspace_bytes));
    if (!y_bytes.empty()) {
      // Poison (NaN in every dtype) so that an element the kernels leave unwritten shows.
      SF_CUDA_CHECK(cudaMemset(d_y.get(), 0xff, y_bytes.size()));
    }
    SF_RETURN_IF_ERROR(op.run(d_a.get(), m, bias != nullptr ? d_bias.get() : nullptr, d_y.get(),
                              d_workspace.get(), workspace_bytes, nullptr));
    SF_CUDA_CHECK(cudaDeviceSynchronize());
    if (!y_bytes.empty()) {
      SF_CUDA_CHECK(cudaMemcpy(y_bytes.data(), d_y.get(), y_bytes.size(),
                               cudaMemcpyDeviceToHost));
    }
    from_device_type(y_bytes, dtype, y);
    return Status();
  }();
  cudaSetDevice(previous);  // the status of the work above is what the caller needs
  return status;
}

// A C string out-parameter: text cut to capacity - 1 bytes and NUL-terminated (nothing is
// written where out is null or capacity is 0).
void copy_out(const std::string& text, char* out, size_t capacity) {
  if (out == nullptr || capacity == 0) return;
  const size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

Status bias_flag_of(int has_bias, bool* out) {
  if (has_bias != 0 && has_bias != 1) {
    return sailfish::invalid_argument("has_bias is ", has_bias, "; accepted: 0, 1");
  }
  *out = has_bias == 1;
  return Status();
}

}  // namespace

extern "C" {

int sf_gpu_available(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error for later calls
    return 0;
  }
  return count > 0 ? 1 : 0;
}

const char* sf_gpu_last_error(void) { return sailfish::c_api::thread_last_error().c_str(); }

int sf_gpu_matmul_nbits_create(int64_t k, int64_t n, int bits, int block_size,
                               int accuracy_level, const uint8_t* b, const float* scales,
                               int zero_kind, const uint8_t* zero_points_packed,
                               const float* zero_points_typed, const int32_t* g_idx, int a_dtype,
                               int tier, int force_chunked, int64_t chunk_rows,
                               sf_gpu_matmul_nbits_op** out) {
  return guarded([&]() -> Status {
    if (out == nullptr) return sailfish::invalid_argument("out is null");
    auto handle = std::make_unique<sf_gpu_matmul_nbits_op>();
    SF_RETURN_IF_ERROR(create_op(k, n, bits, block_size, accuracy_level, b, scales, zero_kind,
                                 zero_points_packed, zero_points_typed, g_idx, a_dtype, tier,
                                 force_chunked, chunk_rows, &handle->op));
    *out = handle.release();
    return Status();
  });
}

int sf_gpu_matmul_nbits_create_from_serialized(const uint8_t* data, size_t size, int64_t k,
                                               int64_t n, int bits, int block_size,
                                               int accuracy_level, int zero_kind, int has_g_idx,
                                               int a_dtype, int tier, int force_chunked,
                                               int64_t chunk_rows, sf_gpu_matmul_nbits_op** out) {
  return guarded([&]() -> Status {
    if (out == nullptr) return sailfish::invalid_argument("out is null");
    DType dtype;
    SF_RETURN_IF_ERROR(a_dtype_of(a_dtype, &dtype));
    ZeroPointKind zk;
    SF_RETURN_IF_ERROR(zero_kind_of(zero_kind, &zk));
    Options options;
    SF_RETURN_IF_ERROR(options_of(tier, force_chunked, chunk_rows, &options));
    auto handle = std::make_unique<sf_gpu_matmul_nbits_op>();
    SF_RETURN_IF_ERROR(MatMulNBitsOp::create_from_serialized(
        data, size, attributes_of(k, n, bits, block_size, accuracy_level), zk, has_g_idx != 0,
        dtype, options, -1, &handle->op));
    *out = handle.release();
    return Status();
  });
}

int sf_gpu_matmul_nbits_save(const sf_gpu_matmul_nbits_op* op, uint8_t* buffer, size_t capacity,
                             size_t* size) {
  return guarded([&]() -> Status {
    if (op == nullptr || op->op == nullptr) return sailfish::invalid_argument("op is null");
    if (size == nullptr) return sailfish::invalid_argument("size is null");
    std::vector<uint8_t> bytes;
    SF_RETURN_IF_ERROR(op->op->save(&bytes));
    *size = bytes.size();
    if (buffer == nullptr) return Status();
    if (capacity < bytes.size()) {
      return sailfish::invalid_argument("save: the buffer holds ", capacity, " bytes; ",
                                        bytes.size(), " are needed");
    }
    std::memcpy(buffer, bytes.data(), bytes.size());
    return Status();
  });
}

int sf_gpu_matmul_nbits_run(sf_gpu_matmul_nbits_op* op, const float* a, int64_t m,
                            const float* bias, float* y, int* tier_used) {
  return guarded([&]() -> Status {
    if (op == nullptr || op->op == nullptr) return sailfish::invalid_argument("op is null");
    return run_op(*op->op, a, m, bias, y, tier_used);
  });
}

int sf_gpu_matmul_nbits_tune(sf_gpu_matmul_nbits_op* op, int64_t m, int has_bias, int launches,
                             int rounds, int* candidates, double* us_per_call, char* chosen_label,
                             size_t label_capacity) {
  return guarded([&]() -> Status {
    if (op == nullptr || op->op == nullptr) return sailfish::invalid_argument("op is null");
    bool bias = false;
    SF_RETURN_IF_ERROR(bias_flag_of(has_bias, &bias));
    sailfish::TuneOptions tune_options;
    if (launches != 0) tune_options.launches = launches;  // tune() says which values it takes
    if (rounds != 0) tune_options.rounds = rounds;
    sailfish::TuneReport report;
    SF_RETURN_IF_ERROR(op->op->tune(m, bias, nullptr, tune_options, &report));
    const sailfish::TuneCandidate& chosen = report.candidates.at(report.chosen);
    if (candidates != nullptr) *candidates = static_cast<int>(report.candidates.size());
    if (us_per_call != nullptr) *us_per_call = chosen.us_per_call;
    copy_out(chosen.label, chosen_label, label_capacity);
    return Status();
  });
}

int sf_gpu_matmul_nbits_plan(sf_gpu_matmul_nbits_op* op, int64_t m, int has_bias, int* tier,
                             char* reason, size_t reason_capacity, size_t* reason_size) {
  return guarded([&]() -> Status {
    if (op == nullptr || op->op == nullptr) return sailfish::invalid_argument("op is null");
    bool bias = false;
    SF_RETURN_IF_ERROR(bias_flag_of(has_bias, &bias));
    sailfish::Plan plan;
    SF_RETURN_IF_ERROR(op->op->plan_for(m, bias, &plan));
    if (tier != nullptr) *tier = static_cast<int>(plan.tier);
    if (reason_size != nullptr) *reason_size = plan.reason.size();
    copy_out(plan.reason, reason, reason_capacity);
    return Status();
  });
}

void sf_gpu_matmul_nbits_destroy(sf_gpu_matmul_nbits_op* op) {
  try {
    delete op;
  } catch (...) {
    // Destructors here do not throw; the catch only keeps that promise at the C boundary.
  }
}

int sf_gpu_matmul_nbits(int64_t k, int64_t n, int bits, int block_size, int accuracy_level,
                        const uint8_t* b, const float* scales, int zero_kind,
                        const uint8_t* zero_points_packed, const float* zero_points_typed,
                        const int32_t* g_idx, const float* bias, const float* a, int64_t m,
                        int a_dtype, int tier, int force_chunked, int64_t chunk_rows, float* y) {
  return guarded([&]() -> Status {
    std::unique_ptr<MatMulNBitsOp> op;
    SF_RETURN_IF_ERROR(create_op(k, n, bits, block_size, accuracy_level, b, scales, zero_kind,
                                 zero_points_packed, zero_points_typed, g_idx, a_dtype, tier,
                                 force_chunked, chunk_rows, &op));
    return run_op(*op, a, m, bias, y, nullptr);
  });
}

}  // extern "C"
