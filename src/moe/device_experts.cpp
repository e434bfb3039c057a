// DeviceExpertsStorage: a layer's local experts in one cudaMalloc, each array stacked over the
// experts at a fixed stride (include/sailfish/moe_gpu.h: DeviceExperts).
#include <utility>

#include "common/cuda_check.h"
#include "common/host_math.h"
#include "sailfish/moe_gpu.h"

namespace sailfish {

namespace {

using ::sailfish::detail::align_up;

struct ExpertsLayout {
  size_t codes = 0, scales = 0, zero_fold = 0, total = 0;
};

ExpertsLayout layout_of(const PackedGeometry& geo, int experts, bool has_zero) {
  ExpertsLayout l;
  const size_t meta = static_cast<size_t>(geo.scale_rows * geo.n_pad) * 2 * experts;
  l.codes = 0;
  size_t offset = align_up(static_cast<size_t>(geo.code_bytes()) * experts, 256);
  l.scales = offset;
  offset = align_up(offset + meta, 256);
  l.zero_fold = offset;
  if (has_zero) offset = align_up(offset + 2 * meta, 256);  // every shift plane, then every fold
  l.total = offset;
  return l;
}

bool same_format(const PackedWeight& a, const PackedWeight& b) {
  return a.geometry.n == b.geometry.n && a.geometry.k == b.geometry.k &&
         a.geometry.bits == b.geometry.bits && a.geometry.group_size == b.geometry.group_size &&
         a.scale_dtype == b.scale_dtype && a.zero_kind == b.zero_kind;
}

}  // namespace

void DeviceExpertsStorage::CudaFree::operator()(void* memory) const {
  cudaFree(memory);  // nothing useful to do with an error while freeing
}

DeviceExpertsStorage::DeviceExpertsStorage(DeviceExpertsStorage&& other) noexcept
    : view_(std::exchange(other.view_, DeviceExperts())),
      memory_(std::move(other.memory_)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceExpertsStorage& DeviceExpertsStorage::operator=(DeviceExpertsStorage&& other) noexcept {
  view_ = std::exchange(other.view_, DeviceExperts());
  memory_ = std::move(other.memory_);
  bytes_ = std::exchange(other.bytes_, 0);
  return *this;
}

Status DeviceExpertsStorage::upload(const std::vector<PackedWeight>& experts,
                                    DeviceExpertsStorage* out) {
  if (out == nullptr) return invalid_argument("DeviceExpertsStorage::upload: out is null");
  if (experts.empty() || experts.size() > static_cast<size_t>(kMoeMaxLocalExperts)) {
    return invalid_argument("DeviceExpertsStorage::upload: ", experts.size(),
                            " experts; accepted: 1 to ", kMoeMaxLocalExperts);
  }
  for (size_t e = 0; e < experts.size(); ++e) {
    SF_RETURN_IF_ERROR(validate(experts[e]));
    if (!same_format(experts[e], experts[0])) {
      return invalid_argument("DeviceExpertsStorage::upload: expert ", e, " (",
                              experts[e].geometry.n, " x ", experts[e].geometry.k, ", int",
                              experts[e].geometry.bits, ", group ", experts[e].geometry.group_size,
                              ", ", dtype_name(experts[e].scale_dtype), " scales, ",
                              zero_point_kind_name(experts[e].zero_kind),
                              " zero points) differs from expert 0; a layer's experts share one "
                              "shape and format");
    }
    if (experts[e].has_act_order()) {
      return unsupported("DeviceExpertsStorage::upload: expert ", e,
                         " has act-order (a g_idx permutation); MoE layers take experts without "
                         "one (requantize, or export the experts in their natural order)");
    }
  }
  const PackedWeight& first = experts[0];
  const int count = static_cast<int>(experts.size());
  const bool has_zero = first.zero_kind != ZeroPointKind::kNone;
  const ExpertsLayout l = layout_of(first.geometry, count, has_zero);
  DeviceExpertsStorage s;
  void* memory = nullptr;
  SF_CUDA_CHECK(cudaMalloc(&memory, l.total));
  s.memory_.reset(memory);
  s.bytes_ = l.total;
  char* base = static_cast<char*>(memory);
  DeviceExperts& v = s.view_;
  v.geometry = first.geometry;
  v.experts = count;
  v.scale_dtype = first.scale_dtype;
  v.zero_kind = first.zero_kind;
  v.codes = base + l.codes;
  v.scales = base + l.scales;
  v.zero_fold = has_zero ? base + l.zero_fold : nullptr;
  const size_t code_bytes = static_cast<size_t>(first.geometry.code_bytes());
  const size_t meta = static_cast<size_t>(v.meta_elements());
  for (int e = 0; e < count; ++e) {
    const PackedWeight& w = experts[static_cast<size_t>(e)];
    SF_CUDA_CHECK(cudaMemcpy(base + l.codes + e * code_bytes, w.codes.data(), code_bytes,
                             cudaMemcpyHostToDevice));
    SF_CUDA_CHECK(cudaMemcpy(base + l.scales + e * meta * 2, w.scales.data(), meta * 2,
                             cudaMemcpyHostToDevice));
    if (has_zero) {
      for (int plane = 0; plane < 2; ++plane) {
        SF_CUDA_CHECK(cudaMemcpy(base + l.zero_fold + (plane * count + e) * meta * 2,
                                 w.zero_fold.data() + plane * meta, meta * 2,
                                 cudaMemcpyHostToDevice));
      }
    }
  }
  *out = std::move(s);
  return Status();
}

Status download_expert(const DeviceExperts& view, int expert, PackedWeight* host) {
  if (host == nullptr) return invalid_argument("download_expert: host is null");
  if (expert < 0 || expert >= view.experts) {
    return invalid_argument("download_expert: expert ", expert, "; the view holds ", view.experts);
  }
  if (view.codes == nullptr || view.scales == nullptr) {
    return invalid_argument("download_expert: the view's codes or scales are null");
  }
  // The copies' sizes and offsets come from the view's geometry, and the result must be a valid
  // PackedWeight: check what it is built from.
  if (Status valid = validate(view.geometry); !valid.ok()) {
    return Status(valid.code(), "download_expert: " + valid.message());
  }
  if (view.scale_dtype != DType::kF16 && view.scale_dtype != DType::kBF16) {
    return invalid_argument("download_expert: the view's scale dtype is ",
                            dtype_name(view.scale_dtype), "; accepted: fp16 or bf16");
  }
  if (view.zero_kind != ZeroPointKind::kNone && view.zero_kind != ZeroPointKind::kInteger &&
      view.zero_kind != ZeroPointKind::kFloat) {
    return invalid_argument("download_expert: the view's zero kind is ", int(view.zero_kind),
                            "; accepted: none, integer or float");
  }
  if (view.zero_kind != ZeroPointKind::kNone && view.zero_fold == nullptr) {
    return invalid_argument("download_expert: the view has zero points (",
                            zero_point_kind_name(view.zero_kind), ") but no zero_fold planes");
  }
  if (view.zero_kind == ZeroPointKind::kNone && view.zero_fold != nullptr) {
    return invalid_argument("download_expert: the view has no zero points (zero kind none) but "
                            "zero_fold is set; leave it null");
  }
  const size_t code_bytes = static_cast<size_t>(view.geometry.code_bytes());
  const size_t meta = static_cast<size_t>(view.meta_elements());
  PackedWeight p;
  p.geometry = view.geometry;
  p.scale_dtype = view.scale_dtype;
  p.zero_kind = view.zero_kind;
  p.codes.resize(code_bytes);
  p.scales.resize(meta);
  const char* codes = static_cast<const char*>(view.codes);
  const char* scales = static_cast<const char*>(view.scales);
  SF_CUDA_CHECK(
      cudaMemcpy(p.codes.data(), codes + expert * code_bytes, code_bytes, cudaMemcpyDeviceToHost));
  SF_CUDA_CHECK(
      cudaMemcpy(p.scales.data(), scales + expert * meta * 2, meta * 2, cudaMemcpyDeviceToHost));
  if (view.zero_fold != nullptr) {
    p.zero_fold.resize(2 * meta);
    const char* planes = static_cast<const char*>(view.zero_fold);
    for (int plane = 0; plane < 2; ++plane) {
      SF_CUDA_CHECK(cudaMemcpy(p.zero_fold.data() + plane * meta,
                               planes + (plane * view.experts + expert) * meta * 2, meta * 2,
                               cudaMemcpyDeviceToHost));
    }
  }
  *host = std::move(p);
  return Status();
}

Status DeviceExpertsStorage::download(int expert, PackedWeight* host) const {
  return download_expert(view_, expert, host);
}

}  // namespace sailfish
