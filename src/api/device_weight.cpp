// DeviceWeightStorage: one cudaMalloc per packed weight, carved into its buffers.
#include <cstdint>
#include <optional>
#include <utility>

#include "api/environment.h"
#include "common/cuda_check.h"
#include "common/host_math.h"
#include "sailfish/sailfish.h"

namespace sailfish {

namespace {

using ::sailfish::detail::align_up;

constexpr char kFillNewWeightsVariable[] = "SAILFISH_FILL_NEW_WEIGHTS";

struct StorageLayout {
  size_t codes = 0, scales = 0, zero_fold = 0, perm = 0, total = 0;
};

StorageLayout layout_of(const PackedGeometry& geo, bool has_zero, bool act_order) {
  StorageLayout l;
  const size_t meta = static_cast<size_t>(geo.scale_rows * geo.n_pad) * 2;
  size_t offset = 0;
  l.codes = offset;
  offset = align_up(offset + static_cast<size_t>(geo.code_bytes()), 256);
  l.scales = offset;
  offset = align_up(offset + meta, 256);
  l.zero_fold = offset;
  if (has_zero) offset = align_up(offset + 2 * meta, 256);  // shifts and folds
  l.perm = offset;
  if (act_order) offset = align_up(offset + static_cast<size_t>(geo.k) * 4, 256);
  l.total = offset;
  return l;
}

}  // namespace

DeviceWeightStorage::~DeviceWeightStorage() { release(); }

void DeviceWeightStorage::release() {
  if (base_ != nullptr) cudaFree(base_);  // nothing useful to do with an error in a destructor
  base_ = nullptr;
  bytes_ = 0;
  view_ = DeviceWeight();
}

DeviceWeightStorage::DeviceWeightStorage(DeviceWeightStorage&& other) noexcept
    : view_(other.view_), base_(other.base_), bytes_(other.bytes_) {
  other.base_ = nullptr;
  other.bytes_ = 0;
  other.view_ = DeviceWeight();
}

DeviceWeightStorage& DeviceWeightStorage::operator=(DeviceWeightStorage&& other) noexcept {
  if (this != &other) {
    release();
    view_ = other.view_;
    base_ = other.base_;
    bytes_ = other.bytes_;
    other.base_ = nullptr;
    other.bytes_ = 0;
    other.view_ = DeviceWeight();
  }
  return *this;
}

Status DeviceWeightStorage::allocate(const PackedGeometry& geometry, DType scale_dtype,
                                     ZeroPointKind zero_kind, bool act_order,
                                     DeviceWeightStorage* out) {
  if (out == nullptr) return invalid_argument("DeviceWeightStorage::allocate: out is null");
  PackedGeometry check;
  SF_RETURN_IF_ERROR(PackedGeometry::make(geometry.n, geometry.k, geometry.bits,
                                          geometry.group_size, &check));
  if (scale_dtype != DType::kF16 && scale_dtype != DType::kBF16) {
    return invalid_argument("scale dtype is ", dtype_name(scale_dtype), "; accepted: fp16, bf16");
  }
  const bool has_zero = zero_kind != ZeroPointKind::kNone;
  const StorageLayout l = layout_of(check, has_zero, act_order);
  // SAILFISH_FILL_NEW_WEIGHTS: a byte every new allocation is filled with (debugging), so a writer
  // that leaves part of the weight unwritten (pack_on_device's padding, say) shows that byte,
  // not whatever fresh memory held (often zeros, which the padding should hold anyway).
  std::optional<int64_t> fill;
  SF_RETURN_IF_ERROR(api::env_int(kFillNewWeightsVariable, 0, &fill));
  if (fill.has_value() && *fill > 255) {
    return invalid_argument(kFillNewWeightsVariable, "=", *fill,
                            " is not a byte; accepted: 0-255, or unset for no fill");
  }
  DeviceWeightStorage s;
  SF_CUDA_CHECK(cudaMalloc(&s.base_, l.total));
  s.bytes_ = l.total;  // from here on s frees the allocation on an early return
  if (fill.has_value()) {
    // Synchronous, so the fill lands before work the caller enqueues on any stream.
    SF_CUDA_CHECK(cudaMemset(s.base_, static_cast<int>(*fill), l.total));
    SF_CUDA_CHECK(cudaDeviceSynchronize());
  }
  char* base = static_cast<char*>(s.base_);
  s.view_.geometry = check;
  s.view_.scale_dtype = scale_dtype;
  s.view_.zero_kind = zero_kind;
  s.view_.codes = base + l.codes;
  s.view_.scales = base + l.scales;
  s.view_.zero_fold = has_zero ? base + l.zero_fold : nullptr;
  s.view_.perm = act_order ? reinterpret_cast<const int32_t*>(base + l.perm) : nullptr;
  *out = std::move(s);
  return Status();
}

Status DeviceWeightStorage::upload(const PackedWeight& host, DeviceWeightStorage* out) {
  if (out == nullptr) return invalid_argument("DeviceWeightStorage::upload: out is null");
  SF_RETURN_IF_ERROR(validate(host));
  DeviceWeightStorage s;
  SF_RETURN_IF_ERROR(allocate(host.geometry, host.scale_dtype, host.zero_kind,
                              host.has_act_order(), &s));
  const DeviceWeight& v = s.view_;
  SF_CUDA_CHECK(cudaMemcpy(const_cast<void*>(v.codes), host.codes.data(), host.codes.size(),
                           cudaMemcpyHostToDevice));
  SF_CUDA_CHECK(cudaMemcpy(const_cast<void*>(v.scales), host.scales.data(),
                           host.scales.size() * 2, cudaMemcpyHostToDevice));
  if (v.zero_fold != nullptr) {
    SF_CUDA_CHECK(cudaMemcpy(const_cast<void*>(v.zero_fold), host.zero_fold.data(),
                             host.zero_fold.size() * 2, cudaMemcpyHostToDevice));
  }
  if (v.perm != nullptr) {
    SF_CUDA_CHECK(cudaMemcpy(const_cast<int32_t*>(v.perm), host.perm.data(),
                             host.perm.size() * 4, cudaMemcpyHostToDevice));
  }
  *out = std::move(s);
  return Status();
}

Status validate(const DeviceWeight& weight) {
  SF_RETURN_IF_ERROR(validate(weight.geometry));
  if (weight.scale_dtype != DType::kF16 && weight.scale_dtype != DType::kBF16) {
    return invalid_argument("the weight's scale dtype is ", dtype_name(weight.scale_dtype),
                            "; accepted: fp16 or bf16");
  }
  const ZeroPointKind kind = weight.zero_kind;
  if (kind != ZeroPointKind::kNone && kind != ZeroPointKind::kInteger &&
      kind != ZeroPointKind::kFloat) {
    return invalid_argument("the weight's zero kind is ", int(kind),
                            "; accepted: none, integer or float");
  }
  if (weight.codes == nullptr || weight.scales == nullptr) {
    return invalid_argument("the weight's codes or scales are null");
  }
  if (kind != ZeroPointKind::kNone && weight.zero_fold == nullptr) {
    return invalid_argument("the weight has zero points (zero kind ", zero_point_kind_name(kind),
                            ") but zero_fold is null");
  }
  if (kind == ZeroPointKind::kNone && weight.zero_fold != nullptr) {
    // The kernels read zero folds whenever the pointer is set, and plans size for their kind.
    return invalid_argument("the weight has no zero points (zero kind none) but zero_fold is set; "
                            "leave it null");
  }
  const auto misaligned = [](const void* p, uintptr_t bytes) {
    return reinterpret_cast<uintptr_t>(p) % bytes != 0;
  };
  // The decode and prefill kernels copy every row of these arrays with 16-byte cp.async (or TMA),
  // and the dequantize kernel loads codes as 16-byte vectors: a misaligned address is a fault that
  // leaves the CUDA context unusable, so it is refused here instead.
  if (misaligned(weight.codes, 16) || misaligned(weight.scales, 16) ||
      misaligned(weight.zero_fold, 16)) {
    return invalid_argument("the weight's codes, scales and zero_fold must be 16-byte aligned "
                            "(cudaMalloc'd memory and DeviceWeightStorage are); codes at ",
                            weight.codes, ", scales at ", weight.scales, ", zero_fold at ",
                            weight.zero_fold);
  }
  if (misaligned(weight.perm, 4)) {
    return invalid_argument("the weight's perm must be a 4-byte aligned int32 array; it is at ",
                            static_cast<const void*>(weight.perm));
  }
  return Status();
}

Status download(const DeviceWeight& weight, PackedWeight* host) {
  if (host == nullptr) return invalid_argument("download: host is null");
  if (Status valid = validate(weight); !valid.ok()) {
    return Status(valid.code(), "download: " + valid.message());
  }
  const PackedGeometry& geo = weight.geometry;
  PackedWeight p;
  p.geometry = geo;
  p.scale_dtype = weight.scale_dtype;
  p.zero_kind = weight.zero_kind;
  const size_t meta = static_cast<size_t>(geo.scale_rows * geo.n_pad);
  p.codes.resize(static_cast<size_t>(geo.code_bytes()));
  p.scales.resize(meta);
  SF_CUDA_CHECK(cudaMemcpy(p.codes.data(), weight.codes, p.codes.size(), cudaMemcpyDeviceToHost));
  SF_CUDA_CHECK(cudaMemcpy(p.scales.data(), weight.scales, meta * 2, cudaMemcpyDeviceToHost));
  if (weight.zero_fold != nullptr) {
    p.zero_fold.resize(2 * meta);  // shifts and folds
    SF_CUDA_CHECK(
        cudaMemcpy(p.zero_fold.data(), weight.zero_fold, meta * 4, cudaMemcpyDeviceToHost));
  }
  if (weight.perm != nullptr) {
    p.perm.resize(static_cast<size_t>(geo.k));
    SF_CUDA_CHECK(
        cudaMemcpy(p.perm.data(), weight.perm, p.perm.size() * 4, cudaMemcpyDeviceToHost));
  }
  *host = std::move(p);
  return Status();
}

Status DeviceWeightStorage::download(PackedWeight* host) const {
  if (base_ == nullptr) return invalid_argument("DeviceWeightStorage::download: nothing allocated");
  return sailfish::download(view_, host);
}

}  // namespace sailfish
