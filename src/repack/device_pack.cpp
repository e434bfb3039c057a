// Host side of the GPU repack (include/sailfish/device_pack.h): checks the arguments the way the
// CPU importers and pack() do, settles what the destination must hold (geometry, zero kind,
// act-order permutation), allocates it, and enqueues the code and metadata kernels over a reader
// of the source format.
//
// Device memory: the destination storage plus one 4-byte flag word (DeviceFlag); nothing else,
// whatever the size of the weight. The permutation is uploaded straight into the destination's
// perm buffer, where the code kernel reads it.
#include <cstdint>
#include <utility>
#include <vector>

#include "common/cuda_check.h"
#include "repack/pack_kernels.h"
#include "repack/source_readers.h"
#include "sailfish/device_pack.h"
#include "sailfish/packed_format.h"

namespace sailfish {

namespace {

using repack::ScalarArray;

// The one device temporary: a word the kernels OR their ErrorFlag bits into.
class DeviceFlag {
 public:
  DeviceFlag() = default;
  ~DeviceFlag() {
    if (word_ != nullptr) cudaFree(word_);  // nothing useful to do with an error here
  }
  DeviceFlag(const DeviceFlag&) = delete;
  DeviceFlag& operator=(const DeviceFlag&) = delete;

  // Allocates on first use; zeroes the word in stream order.
  Status reset(cudaStream_t stream) {
    if (word_ == nullptr) {
      SF_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&word_), sizeof(uint32_t)));
    }
    SF_CUDA_CHECK(cudaMemsetAsync(word_, 0, sizeof(uint32_t), stream));
    return Status();
  }
  // Synchronizes the stream, then returns the bits.
  Status read(cudaStream_t stream, uint32_t* value) const {
    uint32_t host = 0;
    SF_CUDA_CHECK(cudaMemcpyAsync(&host, word_, sizeof(host), cudaMemcpyDeviceToHost, stream));
    SF_CUDA_CHECK(cudaStreamSynchronize(stream));
    *value = host;
    return Status();
  }
  uint32_t* get() const { return word_; }

 private:
  uint32_t* word_ = nullptr;
};

Status check_output(DType scale_dtype, const DeviceWeightStorage* out) {
  if (out == nullptr) return invalid_argument("pack_on_device: out is null");
  if (scale_dtype != DType::kF16 && scale_dtype != DType::kBF16) {
    return invalid_argument("pack_on_device: scale dtype is ", dtype_name(scale_dtype),
                            "; accepted: fp16 or bf16 (the activation type the weight serves)");
  }
  return Status();
}

Status check_source_dtype(DType dtype, const char* what) {
  if (dtype != DType::kF16 && dtype != DType::kBF16 && dtype != DType::kF32) {
    return invalid_argument(what, " dtype ", static_cast<int>(dtype),
                            " is not one of fp16, bf16, fp32");
  }
  return Status();
}

// Non-null, aligned to `alignment`, and readable by kernels on the current device. A pageable
// host pointer would otherwise fault inside a kernel and poison the whole CUDA context.
Status check_device_array(const void* ptr, size_t alignment, const char* what) {
  if (ptr == nullptr) return invalid_argument(what, " is null");
  if (reinterpret_cast<uintptr_t>(ptr) % alignment != 0) {
    return invalid_argument(what, " (", ptr, ") is not aligned to its element size, ", alignment,
                            " bytes");
  }
  cudaPointerAttributes attr{};
  const cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // ours: do not leave it for the next launch check to find
    return invalid_argument(what, " (", ptr, ") is not memory CUDA knows: ",
                            cudaGetErrorName(err));
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice: {
      int device = 0;
      SF_CUDA_CHECK(cudaGetDevice(&device));
      if (attr.device != device) {
        return invalid_argument(what, " lives on device ", attr.device,
                                " but the current device is ", device);
      }
      return Status();
    }
    case cudaMemoryTypeManaged:
      return Status();
    case cudaMemoryTypeHost:
      if (attr.devicePointer == ptr) return Status();
      return invalid_argument(what, " is pinned host memory mapped at another device address; "
                              "pass its device pointer (cudaHostGetDevicePointer)");
    default:
      return invalid_argument(what, " (", ptr, ") is pageable host memory, which kernels cannot "
                              "read: copy it to the device first");
  }
}

Status check_scalar_array(const void* ptr, DType dtype, const char* what) {
  SF_RETURN_IF_ERROR(check_source_dtype(dtype, what));
  return check_device_array(ptr, static_cast<size_t>(dtype_bytes(dtype)), what);
}

Status check_absent(const void* ptr, const char* what, const char* why) {
  if (ptr != nullptr) return invalid_argument(what, " is set, but ", why);
  return Status();
}

// g_idx to the host (synchronizes `stream`).
Status copy_g_idx(const int32_t* g_idx, int64_t k, cudaStream_t stream,
                  std::vector<int32_t>* host) {
  host->assign(static_cast<size_t>(k), 0);
  SF_CUDA_CHECK(cudaMemcpyAsync(host->data(), g_idx, static_cast<size_t>(k) * sizeof(int32_t),
                                cudaMemcpyDeviceToHost, stream));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  return Status();
}

// What the destination must hold, settled before it is allocated.
struct Target {
  PackedGeometry geo;
  int64_t num_groups = 0;
  ZeroPointKind zero_kind = ZeroPointKind::kNone;
  std::vector<int32_t> perm;  // empty: no act-order
};

// The act-order permutation of a device g_idx, sorted on the host like pack() does.
Status set_perm(const int32_t* g_idx, cudaStream_t stream, Target* target) {
  std::vector<int32_t> host;
  SF_RETURN_IF_ERROR(copy_g_idx(g_idx, target->geo.k, stream, &host));
  return act_order_permutation(host, target->geo.k, target->geo.group_rows, target->num_groups,
                               &target->perm);
}

Status flag_error(uint32_t flags, const char* format, int bits) {
  const int max_code = (1 << bits) - 1;
  if (flags & repack::kErrorCodeOutOfRange) {
    return invalid_argument(format, " codes hold a value above ", max_code, " (the largest ",
                            bits, "-bit code)");
  }
  if (flags & repack::kErrorZeroOutOfRange) {
    return invalid_argument(format, " integer zero points hold a value above ", max_code,
                            " (the largest ", bits, "-bit code)");
  }
  if (flags & repack::kErrorScaleNotFinite) {
    return invalid_argument(format, " scales hold a value that is not finite (NaN or inf)");
  }
  if (flags & repack::kErrorZeroNotFinite) {
    return invalid_argument(format, " float zero points hold a value that is not finite");
  }
  if (flags != 0) return internal_error(format, " repack reported unknown flags ", flags);
  return Status();
}

// Enqueues the perm upload and both kernels into `storage`.
template <class Source>
Status enqueue_pack(const Source& src, const Target& target, DType scale_dtype,
                    const DeviceFlag& flag, cudaStream_t stream, DeviceWeightStorage* storage) {
  const DeviceWeight& view = storage->view();
  const PackedGeometry& geo = target.geo;
  if (!target.perm.empty()) {
    SF_CUDA_CHECK(cudaMemcpyAsync(const_cast<int32_t*>(view.perm), target.perm.data(),
                                  target.perm.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                                  stream));
  }
  repack::CodeLayout codes{};
  codes.n = geo.n;
  codes.k = geo.k;
  codes.k_blocks = geo.k_blocks;
  codes.total_words = geo.code_bytes() / 4;
  codes.bits = geo.bits;
  codes.perm = view.perm;
  SF_RETURN_IF_ERROR(repack::launch_pack_codes(
      src, codes, static_cast<uint32_t*>(const_cast<void*>(view.codes)), flag.get(), stream));

  repack::MetaLayout meta{};
  meta.n = geo.n;
  meta.n_pad = geo.n_pad;
  meta.num_groups = target.num_groups;
  meta.total_entries = geo.scale_rows * geo.n_pad;
  meta.bits = geo.bits;
  meta.dtype = scale_dtype;
  meta.has_zero = target.zero_kind != ZeroPointKind::kNone;
  return repack::launch_pack_metadata(
      src, meta, static_cast<uint16_t*>(const_cast<void*>(view.scales)),
      static_cast<uint16_t*>(const_cast<void*>(view.zero_fold)), flag.get(), stream);
}

// Allocates the destination, packs into it, synchronizes, and hands it over only if the device
// found nothing wrong with the data.
template <class Source>
Status pack_into(const Source& src, const Target& target, DType scale_dtype, const char* format,
                 cudaStream_t stream, DeviceFlag* flag, DeviceWeightStorage* out) {
  DeviceWeightStorage storage;
  SF_RETURN_IF_ERROR(DeviceWeightStorage::allocate(target.geo, scale_dtype, target.zero_kind,
                                                   !target.perm.empty(), &storage));
  SF_RETURN_IF_ERROR(flag->reset(stream));
  const Status enqueued = enqueue_pack(src, target, scale_dtype, *flag, stream, &storage);
  // Synchronize even when enqueueing failed half way: no kernel may still be writing into the
  // storage (or reading the perm vector) once this function returns.
  uint32_t flags = 0;
  const Status synced = flag->read(stream, &flags);
  SF_RETURN_IF_ERROR(enqueued);
  SF_RETURN_IF_ERROR(synced);
  SF_RETURN_IF_ERROR(flag_error(flags, format, target.geo.bits));
  *out = std::move(storage);
  return Status();
}

}  // namespace

Status pack_on_device(const DeviceCanonicalWeight& w, DType scale_dtype, cudaStream_t stream,
                      DeviceWeightStorage* out) {
  SF_RETURN_IF_ERROR(check_output(scale_dtype, out));
  Target target;
  SF_RETURN_IF_ERROR(PackedGeometry::make(w.n, w.k, w.bits, w.group_size, &target.geo));
  target.num_groups = group_count(w.k, w.group_size);
  target.zero_kind = w.zero_kind;
  SF_RETURN_IF_ERROR(check_device_array(w.codes, 1, "canonical codes"));
  SF_RETURN_IF_ERROR(check_scalar_array(w.scales, w.scales_dtype, "canonical scales"));
  switch (w.zero_kind) {
    case ZeroPointKind::kNone:
      SF_RETURN_IF_ERROR(check_absent(w.zero_codes, "canonical zero_codes", "zero_kind is none"));
      SF_RETURN_IF_ERROR(
          check_absent(w.zero_values, "canonical zero_values", "zero_kind is none"));
      break;
    case ZeroPointKind::kInteger:
      SF_RETURN_IF_ERROR(check_device_array(w.zero_codes, 1, "canonical zero_codes"));
      SF_RETURN_IF_ERROR(
          check_absent(w.zero_values, "canonical zero_values", "zero_kind is integer"));
      break;
    case ZeroPointKind::kFloat:
      SF_RETURN_IF_ERROR(
          check_scalar_array(w.zero_values, w.zero_values_dtype, "canonical zero_values"));
      SF_RETURN_IF_ERROR(
          check_absent(w.zero_codes, "canonical zero_codes", "zero_kind is float"));
      break;
    default:
      return invalid_argument("canonical zero_kind ", static_cast<int>(w.zero_kind),
                              " is not one of none/integer/float");
  }
  if (w.g_idx != nullptr) {
    if (w.group_size == kChannelwise) {
      return invalid_argument("g_idx (act-order) needs a group size; channelwise has one group");
    }
    SF_RETURN_IF_ERROR(check_device_array(w.g_idx, sizeof(int32_t), "canonical g_idx"));
    SF_RETURN_IF_ERROR(set_perm(w.g_idx, stream, &target));
  }
  repack::CanonicalSource src{};
  src.n = w.n;
  src.k = w.k;
  src.bits = w.bits;
  src.codes = w.codes;
  src.scales = ScalarArray{w.scales, w.scales_dtype};
  src.zero_kind = w.zero_kind;
  src.zero_codes = w.zero_codes;
  src.zero_values = ScalarArray{w.zero_values, w.zero_values_dtype};
  DeviceFlag flag;
  return pack_into(src, target, scale_dtype, "canonical", stream, &flag, out);
}

Status pack_on_device(const DeviceGptqWeight& w, DType scale_dtype, cudaStream_t stream,
                      DeviceWeightStorage* out) {
  SF_RETURN_IF_ERROR(check_output(scale_dtype, out));
  Target target;
  SF_RETURN_IF_ERROR(PackedGeometry::make(w.n, w.k, w.bits, w.group_size, &target.geo));
  target.num_groups = group_count(w.k, w.group_size);
  const int per_word = 32 / w.bits;
  if (w.k % per_word != 0) {
    return invalid_argument("GPTQ k is ", w.k, "; qweight packs ", per_word, " ", w.bits,
                            "-bit codes per int32 along K, so k must be a multiple of ", per_word);
  }
  if (w.zero_convention != GptqZeroConvention::kV1MinusOne &&
      w.zero_convention != GptqZeroConvention::kV2Exact) {
    return invalid_argument("GPTQ zero convention ", static_cast<int>(w.zero_convention),
                            " is neither v1 (minus one) nor v2 (exact)");
  }
  SF_RETURN_IF_ERROR(check_device_array(w.qweight, sizeof(int32_t), "GPTQ qweight"));
  SF_RETURN_IF_ERROR(check_scalar_array(w.scales, w.scales_dtype, "GPTQ scales"));
  if (w.qzeros != nullptr) {
    if (w.n % per_word != 0) {
      return invalid_argument("GPTQ n is ", w.n, "; qzeros packs ", per_word, " ", w.bits,
                              "-bit zero points per int32 along N, so n must be a multiple of ",
                              per_word);
    }
    SF_RETURN_IF_ERROR(check_device_array(w.qzeros, sizeof(int32_t), "GPTQ qzeros"));
  }
  repack::GptqSource src{};
  src.n = w.n;
  src.bits = w.bits;
  src.v1_minus_one = w.zero_convention == GptqZeroConvention::kV1MinusOne;
  src.qweight = w.qweight;
  src.qzeros = w.qzeros;
  src.scales = ScalarArray{w.scales, w.scales_dtype};

  if (w.g_idx != nullptr) {
    SF_RETURN_IF_ERROR(check_device_array(w.g_idx, sizeof(int32_t), "GPTQ g_idx"));
    if (w.group_size == kChannelwise) {
      // AutoGPTQ writes an all-zero g_idx for channelwise weights; import_gptq drops it.
      std::vector<int32_t> host;
      SF_RETURN_IF_ERROR(copy_g_idx(w.g_idx, w.k, stream, &host));
      for (int32_t g : host) {
        if (g != 0) {
          return invalid_argument("GPTQ g_idx holds group ", g, " but the weight is channelwise "
                                  "(one group): act-order needs a group size");
        }
      }
    } else {
      SF_RETURN_IF_ERROR(set_perm(w.g_idx, stream, &target));
    }
  }
  DeviceFlag flag;
  if (w.qzeros != nullptr) {
    // Symmetric checkpoints still write qzeros (all the code bias): those pack as kNone.
    SF_RETURN_IF_ERROR(flag.reset(stream));
    const Status launched = repack::launch_gptq_zero_scan(src, target.num_groups, flag.get(),
                                                          stream);
    uint32_t flags = 0;
    const Status synced = flag.read(stream, &flags);
    SF_RETURN_IF_ERROR(launched);
    SF_RETURN_IF_ERROR(synced);
    if (flags & repack::kErrorZeroNotBias) target.zero_kind = ZeroPointKind::kInteger;
  }
  return pack_into(src, target, scale_dtype, "GPTQ", stream, &flag, out);
}

Status pack_on_device(const DeviceAwqWeight& w, DType scale_dtype, cudaStream_t stream,
                      DeviceWeightStorage* out) {
  SF_RETURN_IF_ERROR(check_output(scale_dtype, out));
  Target target;
  SF_RETURN_IF_ERROR(PackedGeometry::make(w.n, w.k, 4, w.group_size, &target.geo));
  target.num_groups = group_count(w.k, w.group_size);
  // AWQ zero points are data even when they all equal the bias (import_awq): always kInteger.
  target.zero_kind = ZeroPointKind::kInteger;
  if (w.n % 8 != 0) {
    return invalid_argument("AWQ n is ", w.n, "; qweight and qzeros pack 8 columns per int32, "
                            "so n must be a multiple of 8");
  }
  SF_RETURN_IF_ERROR(check_device_array(w.qweight, sizeof(int32_t), "AWQ qweight"));
  SF_RETURN_IF_ERROR(check_device_array(w.qzeros, sizeof(int32_t), "AWQ qzeros"));
  SF_RETURN_IF_ERROR(check_scalar_array(w.scales, w.scales_dtype, "AWQ scales"));
  repack::AwqSource src{};
  src.n = w.n;
  src.qweight = w.qweight;
  src.qzeros = w.qzeros;
  src.scales = ScalarArray{w.scales, w.scales_dtype};
  DeviceFlag flag;
  return pack_into(src, target, scale_dtype, "AWQ", stream, &flag, out);
}

Status pack_on_device(const DeviceMatMulNBitsWeight& w, DType scale_dtype, cudaStream_t stream,
                      DeviceWeightStorage* out) {
  SF_RETURN_IF_ERROR(check_output(scale_dtype, out));
  const bool power_of_two = w.block_size > 0 && (w.block_size & (w.block_size - 1)) == 0;
  if (!power_of_two || w.block_size < 16 || w.block_size > 256) {
    return invalid_argument("MatMulNBits block_size is ", w.block_size,
                            "; accepted: a power of two in 16..256 (16, 32, 64, 128, 256)");
  }
  Target target;
  SF_RETURN_IF_ERROR(PackedGeometry::make(w.n, w.k, w.bits, w.block_size, &target.geo));
  const int64_t k_blocks = group_count(w.k, w.block_size);
  target.num_groups = k_blocks;
  target.zero_kind = w.zero_kind;
  SF_RETURN_IF_ERROR(check_device_array(w.b, 1, "MatMulNBits B"));
  SF_RETURN_IF_ERROR(check_scalar_array(w.scales, w.scales_dtype, "MatMulNBits scales"));
  switch (w.zero_kind) {
    case ZeroPointKind::kNone:
      SF_RETURN_IF_ERROR(check_absent(w.zero_points_packed, "MatMulNBits zero_points_packed",
                                      "zero_kind is none"));
      SF_RETURN_IF_ERROR(check_absent(w.zero_points_typed, "MatMulNBits zero_points_typed",
                                      "zero_kind is none"));
      break;
    case ZeroPointKind::kInteger:
      SF_RETURN_IF_ERROR(
          check_device_array(w.zero_points_packed, 1, "MatMulNBits zero_points_packed"));
      SF_RETURN_IF_ERROR(check_absent(w.zero_points_typed, "MatMulNBits zero_points_typed",
                                      "zero_kind is integer"));
      break;
    case ZeroPointKind::kFloat:
      SF_RETURN_IF_ERROR(check_scalar_array(w.zero_points_typed, w.zero_points_dtype,
                                            "MatMulNBits zero_points_typed"));
      SF_RETURN_IF_ERROR(check_absent(w.zero_points_packed, "MatMulNBits zero_points_packed",
                                      "zero_kind is float"));
      break;
    default:
      return invalid_argument("MatMulNBits zero_kind ", static_cast<int>(w.zero_kind),
                              " is not one of none/integer/float");
  }
  if (w.g_idx != nullptr) {
    SF_RETURN_IF_ERROR(check_device_array(w.g_idx, sizeof(int32_t), "MatMulNBits g_idx"));
    SF_RETURN_IF_ERROR(set_perm(w.g_idx, stream, &target));
  }
  repack::MatMulNBitsSource src{};
  src.bits = w.bits;
  src.k_blocks = k_blocks;
  src.row_bytes = k_blocks * w.block_size * w.bits / 8;
  src.b = w.b;
  src.scales = ScalarArray{w.scales, w.scales_dtype};
  src.zero_kind = w.zero_kind;
  src.zero_packed = w.zero_points_packed;
  src.zero_row_bytes = (k_blocks * w.bits + 7) / 8;
  src.zero_typed = ScalarArray{w.zero_points_typed, w.zero_points_dtype};
  DeviceFlag flag;
  return pack_into(src, target, scale_dtype, "MatMulNBits", stream, &flag, out);
}

}  // namespace sailfish
