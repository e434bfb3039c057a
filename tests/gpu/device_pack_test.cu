// The GPU repack (sailfish/device_pack.h) against the CPU path, byte for byte.
//
// Every case draws a random weight (fresh seed per process: test_seed()), writes it in the source
// format with the colleagues' exporters, and then packs the very same source values twice:
//   CPU:    import_<format>(host tensors) -> pack(w, scale_dtype)
//   device: upload the tensors -> pack_on_device -> DeviceWeightStorage::download
// and compares codes, scales, zero folds, perm, zero kind and geometry. Source scales (and typed
// zero points) are stored on the device as fp32, fp16 or bf16 in turn; the host tensors are
// rounded to that type first, so both paths read identical values.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_test_helpers.h"
#include "sailfish/device_pack.h"
#include "sailfish/importers.h"
#include "sailfish/packed_format.h"
#include "sailfish/quantize.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::DeviceBuffer;
using testing::RandomWeightSpec;
using testing::ScopedEnv;
using testing::random_weight;
using testing::test_seed;

// ---- helpers ------------------------------------------------------------------------------------

DType other_half_type(DType dtype) { return dtype == DType::kF16 ? DType::kBF16 : DType::kF16; }

// The source dtypes cycled through, for round `round` of a test.
DType source_dtype(int round, DType packed) {
  const DType cycle[3] = {DType::kF32, packed, other_half_type(packed)};
  return cycle[round % 3];
}

// Rounds host values to what `dtype` stores, so the CPU reference reads what the device reads.
void round_to(std::vector<float>* values, DType dtype) {
  for (float& v : *values) v = round_to_dtype(v, dtype);
}

// Uploads float values as elements of `dtype` (already representable: see round_to).
bool upload_as(const std::vector<float>& values, DType dtype, DeviceBuffer* buffer) {
  if (dtype == DType::kF32) return buffer->upload(values);
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) bits[i] = float_to_bits(values[i], dtype);
  return buffer->upload(bits);
}

// Fresh device memory often reads as zero, so a packer that skipped writing its padding would still
// match the CPU pack's zero-filled padding. Each compared pack runs with SAILFISH_FILL_NEW_WEIGHTS
// set, so the destination starts out holding 0xA5 bytes wherever the packer does not write
// (checked by DevicePackPadding.FillSettingReachesNewStorage). Stop 56 freed a 0xA5-filled block
// before each pack instead, hoping cudaMalloc would hand the same pages back: on an H100 none of
// its bytes came back.
constexpr unsigned char kFillByte = 0xA5;
constexpr char kFillVariable[] = "SAILFISH_FILL_NEW_WEIGHTS";
constexpr char kFillValue[] = "165";  // kFillByte

template <typename T>
::testing::AssertionResult same_array(const char* what, const std::vector<T>& want,
                                      const std::vector<T>& got) {
  if (want.size() != got.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << got.size() << " elements, CPU has " << want.size();
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i]) {
      return ::testing::AssertionFailure() << what << " differ first at element " << i
                                           << ": device " << int64_t(got[i]) << ", CPU "
                                           << int64_t(want[i]);
    }
  }
  return ::testing::AssertionSuccess();
}

// Everything the device holds (zero_points stay on the host by design).
::testing::AssertionResult same_device_bytes(const PackedWeight& want, const PackedWeight& got) {
  const PackedGeometry& a = want.geometry;
  const PackedGeometry& b = got.geometry;
  if (a.n != b.n || a.k != b.k || a.bits != b.bits || a.group_size != b.group_size ||
      a.n_pad != b.n_pad || a.k_pad != b.k_pad || a.scale_rows != b.scale_rows ||
      a.group_rows != b.group_rows) {
    return ::testing::AssertionFailure() << "geometry differs";
  }
  if (want.scale_dtype != got.scale_dtype) return ::testing::AssertionFailure() << "scale dtype";
  if (want.zero_kind != got.zero_kind) {
    return ::testing::AssertionFailure()
           << "zero kind: device " << zero_point_kind_name(got.zero_kind) << ", CPU "
           << zero_point_kind_name(want.zero_kind);
  }
  ::testing::AssertionResult r = same_array("code bytes", want.codes, got.codes);
  if (r) r = same_array("scales", want.scales, got.scales);
  if (r) r = same_array("zero folds", want.zero_fold, got.zero_fold);
  if (r) r = same_array("perm", want.perm, got.perm);
  return r;
}

::testing::AssertionResult downloads_as(const DeviceWeightStorage& storage,
                                        const PackedWeight& want) {
  PackedWeight got;
  const Status st = storage.download(&got);
  if (!st.ok()) return ::testing::AssertionFailure() << "download: " << st.to_string();
  return same_device_bytes(want, got);
}

std::string where(int64_t n, int64_t k, DType scale_source) {
  return "n=" + std::to_string(n) + " k=" + std::to_string(k) + " source scales " +
         dtype_name(scale_source) + " (replay with SAILFISH_TEST_SEED=" +
         std::to_string(test_seed()) + ")";
}

// A stream of its own, so the tests also cover a non-default, non-blocking stream.
class TestStream {
 public:
  TestStream() { ok_ = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) == cudaSuccess; }
  ~TestStream() {
    if (ok_) cudaStreamDestroy(stream_);
  }
  TestStream(const TestStream&) = delete;
  TestStream& operator=(const TestStream&) = delete;
  bool ok() const { return ok_; }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
  bool ok_ = false;
};

using Param = std::tuple<int, int, ZeroPointKind, bool, DType>;

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [bits, group_size, kind, act_order, dtype] = info.param;
  return "b" + std::to_string(bits) + "_g" +
         (group_size == kChannelwise ? std::string("cw") : std::to_string(group_size)) + "_" +
         zero_point_kind_name(kind) + (act_order ? "_act_" : "_") + dtype_name(dtype);
}

RandomWeightSpec spec_of(const Param& p, int64_t n, int64_t k) {
  RandomWeightSpec spec;
  spec.n = n;
  spec.k = k;
  spec.bits = std::get<0>(p);
  spec.group_size = std::get<1>(p);
  spec.zero_kind = std::get<2>(p);
  spec.act_order = std::get<3>(p);
  spec.scale_dtype = std::get<4>(p);
  return spec;
}

// ---- canonical ----------------------------------------------------------------------------------

// The canonical weight uploaded as it is, with a DeviceCanonicalWeight over it.
struct CanonicalOnDevice {
  DeviceBuffer codes, scales, zero_codes, zero_values, g_idx;
  DeviceCanonicalWeight view;

  bool upload(const QuantizedWeight& w, DType scale_source, DType zero_source) {
    if (!codes.upload(w.codes) || !upload_as(w.scales, scale_source, &scales) ||
        !zero_codes.upload(w.zero_codes) || !upload_as(w.zero_values, zero_source, &zero_values) ||
        !g_idx.upload(w.g_idx)) {
      return false;
    }
    view = DeviceCanonicalWeight();
    view.n = w.n;
    view.k = w.k;
    view.bits = w.bits;
    view.group_size = w.group_size;
    view.codes = codes.as<uint8_t>();
    view.scales = scales.get();
    view.scales_dtype = scale_source;
    view.zero_kind = w.zero_kind;
    view.zero_codes = zero_codes.as<uint8_t>();  // null when empty
    view.zero_values = zero_values.get();
    view.zero_values_dtype = zero_source;
    view.g_idx = g_idx.as<int32_t>();
    return true;
  }
};

class DevicePackCanonical : public ::testing::TestWithParam<Param> {};

// What the padding comparisons rest on: with SAILFISH_FILL_NEW_WEIGHTS set, every byte of a new
// weight's storage (codes, scales, zero_fold, perm) holds the byte before anything writes it.
TEST(DevicePackPadding, FillSettingReachesNewStorage) {
  SF_SKIP_WITHOUT_GPU();
  const ScopedEnv fill(kFillVariable, kFillValue);
  PackedGeometry g;
  ASSERT_TRUE(PackedGeometry::make(200, 300, 4, 32, &g).ok());
  DeviceWeightStorage storage;
  const Status st =
      DeviceWeightStorage::allocate(g, DType::kBF16, ZeroPointKind::kInteger, true, &storage);
  ASSERT_TRUE(st.ok()) << st.to_string();
  std::vector<unsigned char> bytes(storage.bytes());
  ASSERT_EQ(cudaMemcpy(bytes.data(), storage.view().codes, bytes.size(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  size_t filled = 0;
  for (unsigned char b : bytes) filled += b == kFillByte ? 1 : 0;
  EXPECT_EQ(filled, bytes.size()) << "bytes of a new storage holding the fill byte";
}

// A fill that is not a byte is refused by name before anything is allocated (host only).
TEST(DevicePackPadding, FillSettingMustBeAByte) {
  PackedGeometry g;
  ASSERT_TRUE(PackedGeometry::make(64, 64, 4, 64, &g).ok());
  for (const char* bad : {"256", "-1", "0xA5", "lots"}) {
    const ScopedEnv fill(kFillVariable, bad);
    DeviceWeightStorage storage;
    const Status st =
        DeviceWeightStorage::allocate(g, DType::kBF16, ZeroPointKind::kNone, false, &storage);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad << ": " << st.to_string();
    EXPECT_NE(st.message().find(kFillVariable), std::string::npos) << st.message();
    EXPECT_EQ(storage.bytes(), 0u) << bad;
  }
}

TEST_P(DevicePackCanonical, MatchesCpuPack) {
  SF_SKIP_WITHOUT_GPU();
  const DType dtype = std::get<4>(GetParam());
  std::mt19937_64 rng(test_seed() + 201);
  const int64_t shapes[][2] = {{72, 200}, {1, 300}, {130, 1000}, {64, 64}};
  int round = 0;
  for (const auto& shape : shapes) {
    const DType scale_source = source_dtype(round, dtype);
    const DType zero_source = source_dtype(round + 1, dtype);
    ++round;
    QuantizedWeight w = random_weight(rng, spec_of(GetParam(), shape[0], shape[1]));
    round_to(&w.scales, scale_source);
    round_to(&w.zero_values, zero_source);
    PackedWeight want;
    const Status cpu = pack(w, dtype, &want);
    ASSERT_TRUE(cpu.ok()) << cpu.to_string();

    CanonicalOnDevice src;
    ASSERT_TRUE(src.upload(w, scale_source, zero_source));
    const ScopedEnv fill(kFillVariable, kFillValue);
    DeviceWeightStorage storage;
    const Status st = pack_on_device(src.view, dtype, nullptr, &storage);
    ASSERT_TRUE(st.ok()) << st.to_string() << " " << where(w.n, w.k, scale_source);
    EXPECT_TRUE(downloads_as(storage, want)) << where(w.n, w.k, scale_source);
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, DevicePackCanonical,
    ::testing::Combine(::testing::Values(4, 8), ::testing::Values(16, 32, 64, 128, 256, -1),
                       ::testing::Values(ZeroPointKind::kNone, ZeroPointKind::kInteger,
                                         ZeroPointKind::kFloat),
                       ::testing::Bool(), ::testing::Values(DType::kF16, DType::kBF16)),
    param_name);

// ---- GPTQ ---------------------------------------------------------------------------------------

struct GptqOnDevice {
  DeviceBuffer qweight, qzeros, scales, g_idx;
  DeviceGptqWeight view;

  bool upload(const GptqTensors& t, DType scale_source) {
    if (!qweight.upload(t.qweight) || !qzeros.upload(t.qzeros) ||
        !upload_as(t.scales, scale_source, &scales) || !g_idx.upload(t.g_idx)) {
      return false;
    }
    view = DeviceGptqWeight();
    view.k = t.k;
    view.n = t.n;
    view.bits = t.bits;
    view.group_size = t.group_size;
    view.qweight = qweight.as<int32_t>();
    view.qzeros = qzeros.as<int32_t>();  // null when the checkpoint has none
    view.scales = scales.get();
    view.scales_dtype = scale_source;
    view.g_idx = g_idx.as<int32_t>();
    view.zero_convention = t.zero_convention;
    return true;
  }
};

// Imports and packs on the host, packs on the device, compares.
void expect_gptq_matches(GptqTensors t, DType scale_source, DType dtype, cudaStream_t stream) {
  round_to(&t.scales, scale_source);
  QuantizedWeight imported;
  const Status imp = import_gptq(t, &imported);
  ASSERT_TRUE(imp.ok()) << imp.to_string();
  PackedWeight want;
  const Status cpu = pack(imported, dtype, &want);
  ASSERT_TRUE(cpu.ok()) << cpu.to_string();

  GptqOnDevice src;
  ASSERT_TRUE(src.upload(t, scale_source));
  // cudaMemcpy from pageable memory may return before its DMA lands, and a non-blocking stream
  // does not wait for the legacy stream: make the uploads complete before packing on `stream`.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const ScopedEnv fill(kFillVariable, kFillValue);
  DeviceWeightStorage storage;
  const Status st = pack_on_device(src.view, dtype, stream, &storage);
  ASSERT_TRUE(st.ok()) << st.to_string() << " " << where(t.n, t.k, scale_source);
  // Returned synchronized: nothing of ours is left in flight on the stream.
  EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess);
  EXPECT_TRUE(downloads_as(storage, want)) << where(t.n, t.k, scale_source);
}

class DevicePackGptq : public ::testing::TestWithParam<Param> {};

TEST_P(DevicePackGptq, MatchesImportThenPack) {
  SF_SKIP_WITHOUT_GPU();
  TestStream stream;
  ASSERT_TRUE(stream.ok());
  const ZeroPointKind kind = std::get<2>(GetParam());
  const DType dtype = std::get<4>(GetParam());
  std::mt19937_64 rng(test_seed() + 202);
  // k a multiple of 8 (qweight words), n of 8 (qzeros words) for both bit widths.
  const int64_t shapes[][2] = {{72, 200}, {64, 64}, {136, 1024}};
  int round = 0;
  for (const auto& shape : shapes) {
    const QuantizedWeight w = random_weight(rng, spec_of(GetParam(), shape[0], shape[1]));
    for (GptqZeroConvention convention :
         {GptqZeroConvention::kV1MinusOne, GptqZeroConvention::kV2Exact}) {
      GptqTensors t;
      ASSERT_TRUE(export_gptq(w, convention, &t).ok());
      ASSERT_NO_FATAL_FAILURE(
          expect_gptq_matches(t, source_dtype(round++, dtype), dtype, stream.get()));
      if (kind == ZeroPointKind::kNone) {  // symmetric checkpoints may also carry no qzeros
        t.qzeros.clear();
        ASSERT_NO_FATAL_FAILURE(
            expect_gptq_matches(t, source_dtype(round++, dtype), dtype, stream.get()));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, DevicePackGptq,
    ::testing::Combine(::testing::Values(4, 8), ::testing::Values(16, 32, 64, 128, 256, -1),
                       ::testing::Values(ZeroPointKind::kNone, ZeroPointKind::kInteger),
                       ::testing::Bool(), ::testing::Values(DType::kF16, DType::kBF16)),
    param_name);

// AutoGPTQ writes g_idx = 0 everywhere for channelwise weights; import_gptq drops it (no perm).
TEST(DevicePackGptqSpecial, ChannelwiseAllZeroGIdxIsDropped) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(test_seed() + 203);
  for (int bits : {4, 8}) {
    RandomWeightSpec spec;
    spec.n = 72;
    spec.k = 200;
    spec.bits = bits;
    spec.group_size = kChannelwise;
    spec.zero_kind = ZeroPointKind::kInteger;
    GptqTensors t;
    ASSERT_TRUE(export_gptq(random_weight(rng, spec), GptqZeroConvention::kV1MinusOne, &t).ok());
    t.g_idx.assign(static_cast<size_t>(t.k), 0);
    expect_gptq_matches(t, DType::kF32, DType::kF16, nullptr);
  }
}

// A layer of realistic size: many blocks in both directions, act-order.
TEST(DevicePackGptqSpecial, LargeActOrderLayer) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(test_seed() + 204);
  RandomWeightSpec spec;
  spec.n = 1024;
  spec.k = 2048;
  spec.bits = 4;
  spec.group_size = 128;
  spec.zero_kind = ZeroPointKind::kInteger;
  spec.act_order = true;
  spec.scale_dtype = DType::kF16;
  GptqTensors t;
  ASSERT_TRUE(export_gptq(random_weight(rng, spec), GptqZeroConvention::kV1MinusOne, &t).ok());
  expect_gptq_matches(t, DType::kF16, DType::kF16, nullptr);
}

// ---- AWQ ----------------------------------------------------------------------------------------

class DevicePackAwq : public ::testing::TestWithParam<Param> {};

TEST_P(DevicePackAwq, MatchesImportThenPack) {
  SF_SKIP_WITHOUT_GPU();
  const DType dtype = std::get<4>(GetParam());
  std::mt19937_64 rng(test_seed() + 205);
  const int64_t shapes[][2] = {{72, 200}, {8, 1}, {136, 1000}};  // n a multiple of 8, any k
  int round = 0;
  for (const auto& shape : shapes) {
    const DType scale_source = source_dtype(round++, dtype);
    AwqTensors t;
    ASSERT_TRUE(export_awq(random_weight(rng, spec_of(GetParam(), shape[0], shape[1])), &t).ok());
    round_to(&t.scales, scale_source);
    QuantizedWeight imported;
    ASSERT_TRUE(import_awq(t, &imported).ok());
    PackedWeight want;
    ASSERT_TRUE(pack(imported, dtype, &want).ok());

    DeviceBuffer qweight, qzeros, scales;
    ASSERT_TRUE(qweight.upload(t.qweight) && qzeros.upload(t.qzeros) &&
                upload_as(t.scales, scale_source, &scales));
    DeviceAwqWeight view;
    view.k = t.k;
    view.n = t.n;
    view.group_size = t.group_size;
    view.qweight = qweight.as<int32_t>();
    view.qzeros = qzeros.as<int32_t>();
    view.scales = scales.get();
    view.scales_dtype = scale_source;
    const ScopedEnv fill(kFillVariable, kFillValue);
    DeviceWeightStorage storage;
    const Status st = pack_on_device(view, dtype, nullptr, &storage);
    ASSERT_TRUE(st.ok()) << st.to_string() << " " << where(t.n, t.k, scale_source);
    EXPECT_TRUE(downloads_as(storage, want)) << where(t.n, t.k, scale_source);
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, DevicePackAwq,
    ::testing::Combine(::testing::Values(4), ::testing::Values(16, 32, 64, 128, 256, -1),
                       ::testing::Values(ZeroPointKind::kNone, ZeroPointKind::kInteger),
                       ::testing::Values(false), ::testing::Values(DType::kF16, DType::kBF16)),
    param_name);

// ---- MatMulNBits --------------------------------------------------------------------------------

struct MatMulNBitsOnDevice {
  DeviceBuffer b, scales, zero_packed, zero_typed, g_idx;
  DeviceMatMulNBitsWeight view;

  bool upload(const MatMulNBitsTensors& t, DType scale_source, DType zero_source) {
    if (!b.upload(t.b) || !upload_as(t.scales, scale_source, &scales) ||
        !zero_packed.upload(t.zero_points_packed) ||
        !upload_as(t.zero_points_typed, zero_source, &zero_typed) || !g_idx.upload(t.g_idx)) {
      return false;
    }
    view = DeviceMatMulNBitsWeight();
    view.k = t.k;
    view.n = t.n;
    view.bits = t.bits;
    view.block_size = t.block_size;
    view.b = b.as<uint8_t>();
    view.scales = scales.get();
    view.scales_dtype = scale_source;
    view.zero_kind = t.zero_kind;
    view.zero_points_packed = zero_packed.as<uint8_t>();
    view.zero_points_typed = zero_typed.get();
    view.zero_points_dtype = zero_source;
    view.g_idx = g_idx.as<int32_t>();
    return true;
  }
};

class DevicePackMatMulNBits : public ::testing::TestWithParam<Param> {};

TEST_P(DevicePackMatMulNBits, MatchesImportThenPack) {
  SF_SKIP_WITHOUT_GPU();
  const DType dtype = std::get<4>(GetParam());
  std::mt19937_64 rng(test_seed() + 206);
  // K need not be a multiple of block_size: the last block's tail is padding, never read.
  const int64_t shapes[][2] = {{72, 200}, {1, 300}, {130, 1000}};
  int round = 0;
  for (const auto& shape : shapes) {
    const DType scale_source = source_dtype(round, dtype);
    const DType zero_source = source_dtype(round + 2, dtype);
    ++round;
    MatMulNBitsTensors t;
    ASSERT_TRUE(
        export_matmul_nbits(random_weight(rng, spec_of(GetParam(), shape[0], shape[1])), &t)
            .ok());
    round_to(&t.scales, scale_source);
    round_to(&t.zero_points_typed, zero_source);
    QuantizedWeight imported;
    const Status imp = import_matmul_nbits(t, &imported);
    ASSERT_TRUE(imp.ok()) << imp.to_string();
    PackedWeight want;
    ASSERT_TRUE(pack(imported, dtype, &want).ok());

    MatMulNBitsOnDevice src;
    ASSERT_TRUE(src.upload(t, scale_source, zero_source));
    const ScopedEnv fill(kFillVariable, kFillValue);
    DeviceWeightStorage storage;
    const Status st = pack_on_device(src.view, dtype, nullptr, &storage);
    ASSERT_TRUE(st.ok()) << st.to_string() << " " << where(t.n, t.k, scale_source);
    EXPECT_TRUE(downloads_as(storage, want)) << where(t.n, t.k, scale_source);
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, DevicePackMatMulNBits,
    ::testing::Combine(::testing::Values(4, 8), ::testing::Values(16, 32, 64, 128, 256),
                       ::testing::Values(ZeroPointKind::kNone, ZeroPointKind::kInteger,
                                         ZeroPointKind::kFloat),
                       ::testing::Bool(), ::testing::Values(DType::kF16, DType::kBF16)),
    param_name);

// ---- bad input ----------------------------------------------------------------------------------

QuantizedWeight small_weight(ZeroPointKind kind, bool act_order = false) {
  std::mt19937_64 rng(test_seed() + 207);
  RandomWeightSpec spec;
  spec.n = 64;
  spec.k = 128;
  spec.group_size = 32;
  spec.zero_kind = kind;
  spec.act_order = act_order;
  return random_weight(rng, spec);
}

#define SF_EXPECT_CODE(expr, expected_code)                                          \
  do {                                                                               \
    const ::sailfish::Status sf_st_ = (expr);                                        \
    EXPECT_EQ(sf_st_.code(), (expected_code)) << #expr << ": " << sf_st_.to_string(); \
  } while (0)

TEST(DevicePackBadInput, ArgumentsTheCpuPathRefuses) {
  SF_SKIP_WITHOUT_GPU();
  const QuantizedWeight w = small_weight(ZeroPointKind::kInteger);
  CanonicalOnDevice src;
  ASSERT_TRUE(src.upload(w, DType::kF32, DType::kF32));
  const auto bad = StatusCode::kInvalidArgument;
  DeviceWeightStorage out;
  SF_EXPECT_CODE(pack_on_device(src.view, DType::kBF16, nullptr, nullptr), bad);
  SF_EXPECT_CODE(pack_on_device(src.view, DType::kF32, nullptr, &out), bad);

  auto with = [&](auto change) {
    DeviceCanonicalWeight v = src.view;
    change(v);
    return pack_on_device(v, DType::kBF16, nullptr, &out);
  };
  SF_EXPECT_CODE(with([](DeviceCanonicalWeight& v) { v.bits = 3; }), bad);
  SF_EXPECT_CODE(with([](DeviceCanonicalWeight& v) { v.group_size = 48; }), bad);
  SF_EXPECT_CODE(with([](DeviceCanonicalWeight& v) { v.n = 0; }), bad);
  SF_EXPECT_CODE(with([](DeviceCanonicalWeight& v) { v.k = -5; }), bad);
  SF_EXPECT_CODE(with([](DeviceCanonicalWeight& v) { v.n = int64_t(1) << 25; }),
                 StatusCode::kUnsupported);
  SF_EXPECT_CODE(with([](DeviceCanonicalWeight& v) { v.codes = nullptr; }), bad);
  SF_EXPECT_CODE(with([](DeviceCanonicalWeight& v) { v.scales = nullptr; }), bad);
  SF_EXPECT_CODE(with([](DeviceCanonicalWeight& v) { v.scales_dtype = static_cast<DType>(9); }),
                 bad);
  // Host memory the kernels cannot read, and a misaligned fp32 array.
  SF_EXPECT_CODE(with([&](DeviceCanonicalWeight& v) { v.codes = w.codes.data(); }), bad);
  SF_EXPECT_CODE(with([&](DeviceCanonicalWeight& v) {
                   v.scales = static_cast<const char*>(src.view.scales) + 2;
                 }),
                 bad);
  // Zero point arrays that do not match the zero kind.
  SF_EXPECT_CODE(with([](DeviceCanonicalWeight& v) { v.zero_kind = ZeroPointKind::kNone; }), bad);
  SF_EXPECT_CODE(with([](DeviceCanonicalWeight& v) { v.zero_codes = nullptr; }), bad);
  SF_EXPECT_CODE(with([](DeviceCanonicalWeight& v) {
                   v.zero_kind = ZeroPointKind::kFloat;
                 }),
                 bad);
  SF_EXPECT_CODE(
      with([](DeviceCanonicalWeight& v) { v.zero_kind = static_cast<ZeroPointKind>(7); }), bad);
  EXPECT_EQ(out.bytes(), 0u) << "out must stay untouched on error";
}

TEST(DevicePackBadInput, DataFoundBadOnTheDevice) {
  SF_SKIP_WITHOUT_GPU();
  const QuantizedWeight good = small_weight(ZeroPointKind::kInteger);
  // A good result in `out` first: failures below must leave it as it is.
  CanonicalOnDevice ok_src;
  ASSERT_TRUE(ok_src.upload(good, DType::kF32, DType::kF32));
  DeviceWeightStorage out;
  ASSERT_TRUE(pack_on_device(ok_src.view, DType::kBF16, nullptr, &out).ok());
  const void* codes_before = out.view().codes;
  const size_t bytes_before = out.bytes();

  auto expect_refused = [&](QuantizedWeight w, const char* what) {
    CanonicalOnDevice src;
    ASSERT_TRUE(src.upload(w, DType::kF32, DType::kF32)) << what;
    const Status st = pack_on_device(src.view, DType::kBF16, nullptr, &out);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << what << ": " << st.to_string();
    EXPECT_EQ(out.view().codes, codes_before) << what;
    EXPECT_EQ(out.bytes(), bytes_before) << what;
  };
  QuantizedWeight w = good;
  w.codes[1234] = 16;  // 4-bit codes stop at 15
  expect_refused(w, "code out of range");
  w = good;
  w.codes.back() = 255;
  expect_refused(w, "last code out of range");
  w = good;
  w.scales[17] = std::numeric_limits<float>::quiet_NaN();
  expect_refused(w, "NaN scale");
  w = good;
  w.scales[0] = std::numeric_limits<float>::infinity();
  expect_refused(w, "infinite scale");
  w = good;
  w.zero_codes[9] = 16;
  expect_refused(w, "zero code out of range");
  w = good;
  w.zero_kind = ZeroPointKind::kFloat;
  w.zero_values.assign(w.zero_codes.size(), 7.5f);
  w.zero_codes.clear();
  w.zero_values[3] = -std::numeric_limits<float>::infinity();
  expect_refused(w, "infinite float zero point");

  // The context survived all of that: a good pack still works and matches.
  PackedWeight want;
  ASSERT_TRUE(pack(good, DType::kBF16, &want).ok());
  DeviceWeightStorage again;
  ASSERT_TRUE(pack_on_device(ok_src.view, DType::kBF16, nullptr, &again).ok());
  EXPECT_TRUE(downloads_as(again, want));
  EXPECT_TRUE(downloads_as(out, want));
}

TEST(DevicePackBadInput, ActOrderGIdx) {
  SF_SKIP_WITHOUT_GPU();
  const QuantizedWeight good = small_weight(ZeroPointKind::kNone, /*act_order=*/true);
  DeviceWeightStorage out;
  auto status_of = [&](const QuantizedWeight& w, int group_size) {
    CanonicalOnDevice src;
    if (!src.upload(w, DType::kF32, DType::kF32)) return internal_error("upload failed");
    src.view.group_size = group_size;
    return pack_on_device(src.view, DType::kF16, nullptr, &out);
  };
  EXPECT_TRUE(status_of(good, good.group_size).ok());
  QuantizedWeight w = good;
  w.g_idx[5] = 4;  // 128 / 32 = 4 groups: 4 is out of range
  SF_EXPECT_CODE(status_of(w, w.group_size), StatusCode::kInvalidArgument);
  w = good;
  w.g_idx[5] = -1;
  SF_EXPECT_CODE(status_of(w, w.group_size), StatusCode::kInvalidArgument);
  w = good;
  w.g_idx[5] = (w.g_idx[5] + 1) % 4;  // one group one row short, another one long
  SF_EXPECT_CODE(status_of(w, w.group_size), StatusCode::kUnsupported);
  SF_EXPECT_CODE(status_of(good, kChannelwise), StatusCode::kInvalidArgument);
}

TEST(DevicePackBadInput, GptqShapes) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(test_seed() + 208);
  RandomWeightSpec spec;
  spec.n = 64;
  spec.k = 128;
  spec.group_size = 32;
  spec.zero_kind = ZeroPointKind::kInteger;
  GptqTensors t;
  ASSERT_TRUE(export_gptq(random_weight(rng, spec), GptqZeroConvention::kV2Exact, &t).ok());
  GptqOnDevice src;
  ASSERT_TRUE(src.upload(t, DType::kF32));
  DeviceWeightStorage out;
  auto with = [&](auto change) {
    DeviceGptqWeight v = src.view;
    change(v);
    return pack_on_device(v, DType::kF16, nullptr, &out);
  };
  const auto bad = StatusCode::kInvalidArgument;
  EXPECT_TRUE(with([](DeviceGptqWeight&) {}).ok());
  const void* good_codes = out.view().codes;  // the failures below must leave this in place
  SF_EXPECT_CODE(with([](DeviceGptqWeight& v) { v.k = 100; }), bad);  // not a multiple of 8
  SF_EXPECT_CODE(with([](DeviceGptqWeight& v) { v.n = 36; }), bad);   // qzeros need n % 8 == 0
  SF_EXPECT_CODE(with([](DeviceGptqWeight& v) { v.bits = 2; }), bad);
  SF_EXPECT_CODE(with([](DeviceGptqWeight& v) { v.qweight = nullptr; }), bad);
  SF_EXPECT_CODE(with([](DeviceGptqWeight& v) {
                   v.zero_convention = static_cast<GptqZeroConvention>(5);
                 }),
                 bad);
  // A channelwise weight whose g_idx is not all zeros.
  std::vector<int32_t> g_idx(static_cast<size_t>(t.k), 0);
  g_idx[3] = 1;
  DeviceBuffer g;
  ASSERT_TRUE(g.upload(g_idx));
  SF_EXPECT_CODE(with([&](DeviceGptqWeight& v) {
                   v.group_size = kChannelwise;
                   v.g_idx = g.as<int32_t>();
                 }),
                 bad);
  EXPECT_EQ(out.view().codes, good_codes);
}

TEST(DevicePackBadInput, AwqAndMatMulNBitsShapes) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(test_seed() + 209);
  RandomWeightSpec spec;
  spec.n = 64;
  spec.k = 128;
  spec.group_size = 32;
  spec.zero_kind = ZeroPointKind::kInteger;
  const QuantizedWeight w = random_weight(rng, spec);
  const auto bad = StatusCode::kInvalidArgument;
  DeviceWeightStorage out;

  AwqTensors a;
  ASSERT_TRUE(export_awq(w, &a).ok());
  DeviceBuffer qweight, qzeros, scales;
  ASSERT_TRUE(qweight.upload(a.qweight) && qzeros.upload(a.qzeros) && scales.upload(a.scales));
  DeviceAwqWeight awq;
  awq.k = a.k;
  awq.n = a.n;
  awq.group_size = a.group_size;
  awq.qweight = qweight.as<int32_t>();
  awq.qzeros = qzeros.as<int32_t>();
  awq.scales = scales.get();
  awq.scales_dtype = DType::kF32;
  EXPECT_TRUE(pack_on_device(awq, DType::kBF16, nullptr, &out).ok());
  DeviceAwqWeight bad_awq = awq;
  bad_awq.n = 36;
  SF_EXPECT_CODE(pack_on_device(bad_awq, DType::kBF16, nullptr, &out), bad);
  bad_awq = awq;
  bad_awq.qzeros = nullptr;
  SF_EXPECT_CODE(pack_on_device(bad_awq, DType::kBF16, nullptr, &out), bad);

  MatMulNBitsTensors m;
  ASSERT_TRUE(export_matmul_nbits(w, &m).ok());
  MatMulNBitsOnDevice src;
  ASSERT_TRUE(src.upload(m, DType::kF32, DType::kF32));
  auto with = [&](auto change) {
    DeviceMatMulNBitsWeight v = src.view;
    change(v);
    return pack_on_device(v, DType::kBF16, nullptr, &out);
  };
  EXPECT_TRUE(with([](DeviceMatMulNBitsWeight&) {}).ok());
  SF_EXPECT_CODE(with([](DeviceMatMulNBitsWeight& v) { v.block_size = 48; }), bad);
  SF_EXPECT_CODE(with([](DeviceMatMulNBitsWeight& v) { v.block_size = -1; }), bad);
  SF_EXPECT_CODE(with([](DeviceMatMulNBitsWeight& v) { v.block_size = 512; }), bad);
  SF_EXPECT_CODE(with([](DeviceMatMulNBitsWeight& v) { v.zero_points_packed = nullptr; }), bad);
  SF_EXPECT_CODE(with([&](DeviceMatMulNBitsWeight& v) {
                   v.zero_kind = ZeroPointKind::kNone;
                 }),
                 bad);
  SF_EXPECT_CODE(with([&](DeviceMatMulNBitsWeight& v) { v.zero_points_typed = src.view.scales; }),
                 bad);

  // Typed zero points that are not finite are found on the device.
  spec.zero_kind = ZeroPointKind::kFloat;
  MatMulNBitsTensors f;
  ASSERT_TRUE(export_matmul_nbits(random_weight(rng, spec), &f).ok());
  f.zero_points_typed[11] = std::numeric_limits<float>::quiet_NaN();
  MatMulNBitsOnDevice fsrc;
  ASSERT_TRUE(fsrc.upload(f, DType::kF32, DType::kF32));
  SF_EXPECT_CODE(pack_on_device(fsrc.view, DType::kBF16, nullptr, &out), bad);
}

}  // namespace
}  // namespace sailfish
