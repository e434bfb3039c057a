// Bad and unusual input to the host API at the edges of its integer types: the importers, the canonical and
// packed formats and serialization: shapes whose element counts wrap int64, ceil-divisions that
// overflow near INT64_MAX, packed zero points that unpack() cannot represent, scales that overflow
// their type. Each case must come back as a Status that names the problem; none may crash, read or
// write out of bounds, or hand back a weight that is not what its input says.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "c_api/c_api.h"
#include "dense/config.h"
#include "sailfish/importers.h"
#include "sailfish/packed_format.h"
#include "sailfish/packed_serialize.h"
#include "sailfish/quantize.h"
#include "sailfish/reference.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
// n * 4 and n * 64 both wrap to small numbers: (2^62 + 1) * 4 = 2^64 + 4 == 4 (mod 2^64).
constexpr int64_t kWrappingN = (int64_t{1} << 62) + 1;

void expect_error(const Status& st, const std::string& needle) {
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(needle), std::string::npos)
      << "got \"" << st.message() << "\", expected it to mention \"" << needle << "\"";
}

// ---- the canonical weight: n*k and the group count ---------------------------------------------

// A canonical weight whose n * k wraps to the size of its codes: validate() must refuse it, or
// everything that trusts validate() (reference_gemm, the exporters) walks n rows of 64 codes.
QuantizedWeight wrapping_weight() {
  QuantizedWeight w;
  w.n = kWrappingN;
  w.k = 64;
  w.bits = 4;
  w.group_size = 16;
  w.codes.assign(64, 8);     // n * k wraps to 64
  w.scales.assign(4, 1.0f);  // groups * n = 4 * n wraps to 4
  return w;
}

TEST(HostInputLimits, ValidateRefusesAShapeWhoseElementCountWraps) {
  const QuantizedWeight w = wrapping_weight();
  expect_error(validate(w), "too large");
  expect_error(reference_gemm(nullptr, 0, w, nullptr, nullptr), "too large");
  MatMulNBitsTensors t;
  expect_error(export_matmul_nbits(w, &t), "too large");
}

// ceil(k / group_size) for k near INT64_MAX, without forming k + group_size - 1.
TEST(HostInputLimits, NumGroupsNearInt64MaxDoesNotOverflow) {
  QuantizedWeight w;
  w.k = kInt64Max;
  w.group_size = 128;
  EXPECT_EQ(w.num_groups(), int64_t{1} << 56);  // ceil((2^63 - 1) / 2^7)
}

// ---- MatMulNBits: sizes that wrap int64 ----------------------------------------------------------

// MatMulNBits tensors sized for N = 2^62 + 1, K = 64, block 16, 8 bits as a wrapping product sees
// them: N * k_blocks * blob = 64 bytes of B, N * k_blocks = 4 scales. GPTQ and AWQ refuse such
// shapes ("k*n overflows"); MatMulNBits must too, not walk 2^62 rows of a 64-byte buffer.
TEST(HostInputLimits, MatMulNBitsShapeWhoseSizesWrapIsRefused) {
  MatMulNBitsTensors t;
  t.n = kWrappingN;
  t.k = 64;
  t.bits = 8;
  t.block_size = 16;
  t.b.assign(64, 128);
  t.scales.assign(4, 1.0f);
  QuantizedWeight w;
  expect_error(import_matmul_nbits(t, &w), "too large");
}

// K near INT64_MAX: k_blocks() = ceil(K / block_size) must not overflow on the way.
TEST(HostInputLimits, MatMulNBitsKNearInt64MaxIsRefused) {
  MatMulNBitsTensors t;
  t.n = 1;
  t.k = kInt64Max;
  t.bits = 4;
  t.block_size = 16;
  EXPECT_EQ(t.k_blocks(), (kInt64Max - 1) / 16 + 1);
  QuantizedWeight w;
  const Status st = import_matmul_nbits(t, &w);
  EXPECT_FALSE(st.ok());
  // N * K fits (2^62) but B's N * k_blocks * blob bytes (8 a row) do not: the third check.
  t.n = int64_t{1} << 62;
  t.k = 1;
  expect_error(import_matmul_nbits(t, &w), "too large");
}

// ---- the C ABI ----------------------------------------------------------------------------------

// The C ABI sizes its copies of the raw tensors from the attributes before import_matmul_nbits
// sees them: attributes whose sizes overflow must be refused there too, not multiplied out.
TEST(HostInputLimits, CApiRefusesAttributesWhoseSizesWrap) {
  std::vector<uint8_t> b(64, 128);
  std::vector<float> scales(4, 1.0f);
  std::vector<double> w(64);
  const int rc = sf_dequantize_matmul_nbits(64, kWrappingN, 8, 16, b.data(), scales.data(),
                                            SF_ZP_NONE, nullptr, nullptr, nullptr, w.data());
  EXPECT_NE(rc, SF_OK);
  EXPECT_NE(std::string(sf_last_error()).find("too large"), std::string::npos) << sf_last_error();
}

// ---- quantize_rtn -------------------------------------------------------------------------------

// quantize_rtn must refuse n * k that wraps before it sizes (or reads) anything.
TEST(HostInputLimits, QuantizeRtnRefusesAShapeWhoseElementCountWraps) {
  std::vector<float> weights(64, 0.25f);
  QuantizeOptions options;
  options.group_size = 16;
  QuantizedWeight w;
  expect_error(quantize_rtn(weights.data(), kWrappingN, 64, options, &w), "too large");
}

// A finite weight range whose scale overflows the requested scale type (fp16 tops out at 65504, so
// a symmetric int4 group with |w| = 1e6 needs a scale of 1.3e5) must be refused: a weight with an
// infinite scale is not a valid weight (validate() refuses it) and dequantizes to NaN.
TEST(HostInputLimits, QuantizeRtnRefusesAScaleThatOverflowsItsType) {
  std::vector<float> weights(64, 1e6f);
  QuantizeOptions options;
  options.group_size = 32;
  options.scale_dtype = DType::kF16;
  QuantizedWeight w;
  expect_error(quantize_rtn(weights.data(), 2, 32, options, &w), "scale");
  // Asymmetric fp32: hi - lo overflows float for a finite range.
  weights.assign(64, 3e38f);
  weights[1] = -3e38f;
  options.scheme = QuantScheme::kAsymmetric;
  options.scale_dtype = DType::kF32;
  expect_error(quantize_rtn(weights.data(), 2, 32, options, &w), "scale");
}

// ---- GPTQ: the group count near INT64_MAX --------------------------------------------------------

// GPTQ with n = 1 (no qzeros to force n to fill words) lets k reach INT64_MAX - 7 with k*n in
// range; the group count ceil(k / group_size) must still not overflow.
TEST(HostInputLimits, GptqKNearInt64MaxIsRefusedWithoutOverflow) {
  GptqTensors g;
  g.k = kInt64Max - 7;  // a multiple of 8
  g.n = 1;
  g.bits = 4;
  g.group_size = 128;
  QuantizedWeight w;
  expect_error(import_gptq(g, &w), "qweight");
}

// ---- packed zero points -------------------------------------------------------------------------

// A random 64-row weight of groups of 32 with the given zero points, packed.
PackedWeight packed_weight(ZeroPointKind zero_kind, int64_t k, DType scale_dtype, uint64_t salt) {
  std::mt19937_64 rng(testing::test_seed() + salt);
  testing::RandomWeightSpec spec;
  spec.n = 64;
  spec.k = k;
  spec.group_size = 32;
  spec.zero_kind = zero_kind;
  PackedWeight p;
  EXPECT_TRUE(pack(testing::random_weight(rng, spec), scale_dtype, &p).ok());
  return p;
}

PackedWeight packed_integer_weight() {
  return packed_weight(ZeroPointKind::kInteger, 128, DType::kBF16, 9101);
}

// Integer zero points are stored as float32; unpack() casts them back to uint8 codes. A value that
// is not an integer code of the bit width (fractional, negative, too large, NaN) must be refused,
// not truncated (5.5 -> 5) or converted with undefined behaviour (261 -> whatever the cast gives).
TEST(HostInputLimits, PackedIntegerZeroPointThatIsNotACodeIsRefused) {
  const PackedWeight good = packed_integer_weight();
  for (float bad : {5.5f, -1.0f, 16.0f, 261.0f, std::numeric_limits<float>::quiet_NaN()}) {
    SCOPED_TRACE(bad);
    PackedWeight p = good;
    p.zero_points[0] = bad;
    expect_error(validate(p), "zero point");
    QuantizedWeight w;
    expect_error(unpack(p, &w), "zero point");
  }
}

// Every zero point must be finite, float ones included.
TEST(HostInputLimits, PackedFloatZeroPointMustBeFinite) {
  PackedWeight p = packed_weight(ZeroPointKind::kFloat, 64, DType::kF16, 9102);
  ASSERT_FALSE(p.zero_points.empty());
  p.zero_points[3] = std::numeric_limits<float>::infinity();
  expect_error(validate(p), "zero point");
}

// The shift plane holds integers below 2^bits (the kernels add the shift into a mantissa and
// assume no carry, src/common/dequant.cuh zero_subtrahend); validate() is what stands between a
// packed weight and the device, so it must refuse a shift out of the code range.
TEST(HostInputLimits, PackedShiftOutsideTheCodeRangeIsRefused) {
  PackedWeight p = packed_integer_weight();
  p.zero_fold[0] = 16;  // int4: shifts are 0..15
  expect_error(validate(p), "shift");
}

// The same through deserialize: a blob forged with matching checksums is refused (the header's
// promise), not turned into a weight whose zero point unpacks to something else.
TEST(HostInputLimits, DeserializeRefusesAForgedIntegerZeroPoint) {
  PackedWeight p = packed_integer_weight();
  p.zero_points[0] = 5.5f;
  p.zero_fold[0] = 6;  // the shift pack() would derive from 5.5, so only the zero point is wrong
  // serialize() validates, so build the blob from a good weight and patch the payload.
  std::vector<uint8_t> blob;
  ASSERT_TRUE(serialize(packed_integer_weight(), &blob).ok());
  const size_t zero_fold_at = kPackedHeaderBytes + p.codes.size() + p.scales.size() * 2;
  const size_t zero_points_at = zero_fold_at + p.zero_fold.size() * 2;
  blob[zero_fold_at] = 6;
  blob[zero_fold_at + 1] = 0;
  uint32_t bits;
  std::memcpy(&bits, &p.zero_points[0], 4);
  for (int i = 0; i < 4; ++i) blob[zero_points_at + i] = static_cast<uint8_t>(bits >> (8 * i));
  const uint64_t payload_sum =
      packed_checksum(blob.data() + kPackedHeaderBytes, blob.size() - kPackedHeaderBytes);
  for (int i = 0; i < 8; ++i) {
    blob[kPackedPayloadChecksumOffset + i] = static_cast<uint8_t>(payload_sum >> (8 * i));
  }
  const uint64_t header_sum = packed_checksum(blob.data(), kPackedHeaderChecksumOffset);
  for (int i = 0; i < 8; ++i) {
    blob[kPackedHeaderChecksumOffset + i] = static_cast<uint8_t>(header_sum >> (8 * i));
  }
  PackedWeight out;
  expect_error(deserialize(blob.data(), blob.size(), &out), "zero point");
}

// ---- act_order_permutation arguments --------------------------------------------------------------

// Public, with group geometry passed in: a negative or absurd group count must be refused before it
// sizes a vector (std::vector throws, or the allocator aborts, through a Status API).
TEST(HostInputLimits, ActOrderPermutationRefusesBadGroupGeometry) {
  const std::vector<int32_t> g_idx = {0, 0, 1, 1};
  std::vector<int32_t> perm;
  expect_error(act_order_permutation(g_idx, 4, 2, -1, &perm), "groups");
  EXPECT_FALSE(act_order_permutation(g_idx, 4, 0, 2, &perm).ok());
  expect_error(act_order_permutation(g_idx, 4, 2, int64_t{1} << 50, &perm), "groups");
  EXPECT_TRUE(act_order_permutation(g_idx, 4, 2, 2, &perm).ok());
  EXPECT_EQ(perm, (std::vector<int32_t>{0, 1, 2, 3}));
}

// ---- the dense tier's chunk rows ---------------------------------------------------------------------

// dense_chunk_rows (SAILFISH_DENSE_CHUNK_ROWS) accepts any value from 64 up; rounding INT64_MAX up
// to 64 rows, or doubling it for the two-chunk test, overflowed in plan(). A chunk of at least N
// rows is the whole N, chunked or not, and the ONNX Runtime rule keeps its results below that.
TEST(HostInputLimits, DenseChunkRowsUpToInt64MaxPlanTheWholeN) {
  const int64_t n_pad = 57344, k_pad = 8192, threshold = dense::kDefaultChunkThresholdBytes;
  for (const bool forced : {false, true}) {
    SCOPED_TRACE(forced);
    EXPECT_EQ(dense::dense_rows_per_chunk(n_pad, k_pad, kInt64Max, threshold, forced), n_pad);
    EXPECT_EQ(dense::dense_rows_per_chunk(n_pad, k_pad, n_pad + 1, threshold, forced), n_pad);
  }
  // The rule itself, unchanged: 940 MB of scratch, but N is under two default chunks.
  EXPECT_EQ(dense::dense_rows_per_chunk(n_pad, k_pad, dense::kDefaultChunkRows, threshold, false),
            n_pad);
  // 2 GB of scratch and N past two chunks: chunks of 32768 rows; forced, 100 rows round up to 128.
  EXPECT_EQ(dense::dense_rows_per_chunk(131072, k_pad, dense::kDefaultChunkRows, threshold, false),
            32768);
  EXPECT_EQ(dense::dense_rows_per_chunk(n_pad, k_pad, 100, threshold, true), 128);
  // Under the threshold: never chunked unless forced.
  EXPECT_EQ(dense::dense_rows_per_chunk(1024, 1024, 64, threshold, false), 1024);
}

}  // namespace
}  // namespace sailfish
