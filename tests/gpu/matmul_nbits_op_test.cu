// MatMulNBitsOp on the GPU against the float64 reference (reference_gemm over
// import_matmul_nbits of the very tensors the operator gets): fp16 / bf16 / fp32 activations,
// leading batch dimensions, bias, the forced N-chunked fallback, every tier plan() accepts,
// save -> load bitwise, concurrent runs and tuned plans (MatMulNBitsOp::tune). Bad input:
// matmul_nbits_op_bad_input_test.cu.
//
// Tolerance (as tests/gpu/gemm_check.h): max error against float64 at most 2x that of a plain
// same-precision implementation plus a quarter output ulp at the largest reference magnitude.
// The plain implementation rounds the dequantized weight and the activations to the compute type
// once each, accumulates in float32 and rounds the product to the compute type; for fp32
// activations it then adds the fp32 bias, as the operator does.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gpu_test_helpers.h"
#include "matmul_nbits_op_helpers.h"
#include "sailfish/importers.h"
#include "sailfish/matmul_nbits.h"
#include "sailfish/packed_serialize.h"
#include "sailfish/quantize.h"
#include "sailfish/reference.h"
#include "sailfish/tune.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::create_op;
using testing::DeviceBuffer;
using testing::is_tuned;
using testing::make_node;
using testing::matches_reference;
using testing::Node;
using testing::random_values;
using testing::run_once;
using testing::RunOutput;

// Activation dtype and accuracy_level: fp16, bf16, fp32 (bf16 compute), fp32 (fp16 compute).
struct AMode {
  const char* name;
  DType a_dtype;
  int accuracy_level;
};
constexpr AMode kModes[] = {{"fp16", DType::kF16, 0},
                            {"bf16", DType::kBF16, 0},
                            {"fp32_bf16", DType::kF32, 0},
                            {"fp32_fp16", DType::kF32, 2}};

// ---- correctness over formats -------------------------------------------------------------------

class MatMulNBitsOpFormats
    : public ::testing::TestWithParam<std::tuple<int, int, ZeroPointKind, bool>> {};

TEST_P(MatMulNBitsOpFormats, MatchesReference) {
  SF_SKIP_WITHOUT_GPU();
  const auto [mode_index, bits, zero_kind, g_idx] = GetParam();
  const AMode& mode = kModes[mode_index];
  const DType compute = matmul_nbits_compute_dtype(mode.a_dtype, mode.accuracy_level);
  std::mt19937_64 rng(testing::test_seed() + 201);
  for (int block_size : {16, 128}) {
    // K = 520 is not a multiple of 128 (a partial last block); N = 200 pads to 256.
    const Node node = make_node(rng, 200, 520, bits, block_size, zero_kind, g_idx, compute,
                                mode.accuracy_level);
    std::unique_ptr<MatMulNBitsOp> op;
    const Status st = create_op(node, mode.a_dtype, Options(), &op);
    ASSERT_TRUE(st.ok()) << st.to_string();
    EXPECT_EQ(op->compute_dtype(), compute);
    for (int64_t m : {int64_t(1), int64_t(33)}) {
      const std::vector<float> a = random_values(rng, static_cast<size_t>(m * 520), mode.a_dtype);
      const std::vector<float> bias = random_values(rng, 200, mode.a_dtype);
      const bool with_bias = (m + block_size) % 2 == 1 || m == 1;
      const RunOutput r = run_once(*op, a, m, with_bias ? &bias : nullptr);
      ASSERT_TRUE(r.status.ok()) << r.status.to_string();
      EXPECT_TRUE(matches_reference(r.y, a, m, node.weight, with_bias ? &bias : nullptr,
                                    mode.a_dtype, compute))
          << mode.name << " bits=" << bits << " block=" << block_size
          << " zero=" << zero_point_kind_name(zero_kind) << " g_idx=" << g_idx << " m=" << m;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllModes, MatMulNBitsOpFormats,
    ::testing::Combine(::testing::Range(0, 4), ::testing::Values(4, 8),
                       ::testing::Values(ZeroPointKind::kNone, ZeroPointKind::kInteger,
                                         ZeroPointKind::kFloat),
                       ::testing::Bool()));

// A [2, 3, K] is run as m = 6 rows; odd K (row stride not 16-byte aligned), with bias.
TEST(MatMulNBitsOp, LeadingBatchDimsFlatten) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 202);
  for (const AMode& mode : kModes) {
    const DType compute = matmul_nbits_compute_dtype(mode.a_dtype, mode.accuracy_level);
    const Node node = make_node(rng, 72, 333, 4, 32, ZeroPointKind::kInteger, false, compute,
                                mode.accuracy_level);
    std::unique_ptr<MatMulNBitsOp> op;
    ASSERT_TRUE(create_op(node, mode.a_dtype, Options(), &op).ok());
    const int64_t batch = 2, seq = 3, m = batch * seq;
    const std::vector<float> a = random_values(rng, static_cast<size_t>(m * 333), mode.a_dtype);
    const std::vector<float> bias = random_values(rng, 72, mode.a_dtype);
    const RunOutput r = run_once(*op, a, m, &bias);
    ASSERT_TRUE(r.status.ok()) << r.status.to_string();
    ASSERT_EQ(r.y.size(), static_cast<size_t>(m * 72));
    EXPECT_TRUE(matches_reference(r.y, a, m, node.weight, &bias, mode.a_dtype, compute))
        << mode.name;
  }
}

// fp32 activations at unaligned addresses and N % 4 != 0: the scalar conversion paths.
TEST(MatMulNBitsOp, Fp32UnalignedAndOddN) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 203);
  for (int level : {0, 2}) {
    const DType compute = matmul_nbits_compute_dtype(DType::kF32, level);
    const Node node = make_node(rng, 203, 130, 8, 64, ZeroPointKind::kFloat, true, compute, level);
    std::unique_ptr<MatMulNBitsOp> op;
    ASSERT_TRUE(create_op(node, DType::kF32, Options(), &op).ok());
    const std::vector<float> a = random_values(rng, 5 * 130, DType::kF32);
    const std::vector<float> bias = random_values(rng, 203, DType::kF32);
    for (size_t offset : {size_t(0), size_t(1)}) {
      const RunOutput r = run_once(*op, a, 5, &bias, nullptr, offset);
      ASSERT_TRUE(r.status.ok()) << r.status.to_string();
      EXPECT_TRUE(matches_reference(r.y, a, 5, node.weight, &bias, DType::kF32, compute))
          << "accuracy_level " << level << " offset " << offset;
    }
  }
}

// fp32 values outside the fp16 range: bf16 compute (the default) stays finite.
TEST(MatMulNBitsOp, Fp32DefaultKeepsRange) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 204);
  const Node node = make_node(rng, 64, 64, 4, 32, ZeroPointKind::kNone, false, DType::kBF16);
  std::unique_ptr<MatMulNBitsOp> op;
  ASSERT_TRUE(create_op(node, DType::kF32, Options(), &op).ok());
  std::vector<float> a = random_values(rng, 64, DType::kF32);
  for (auto& v : a) v *= 1e6f;
  const RunOutput r = run_once(*op, a, 1, nullptr);
  ASSERT_TRUE(r.status.ok()) << r.status.to_string();
  for (double v : r.y) EXPECT_TRUE(std::isfinite(v));
  EXPECT_TRUE(matches_reference(r.y, a, 1, node.weight, nullptr, DType::kF32, DType::kBF16));
}

// ---- tiers and the chunked fallback -------------------------------------------------------------

// Every tier plan() accepts is forced in turn; those it refuses with kUnsupported are counted
// and reported as skipped, so new tiers are covered here as soon as plan() offers them.
TEST(MatMulNBitsOp, EveryAcceptedTier) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 205);
  const Tier tiers[] = {Tier::kDense, Tier::kDecode, Tier::kPrefill, Tier::kAuto};
  int ran = 0, skipped = 0;
  for (const AMode& mode : kModes) {
    const DType compute = matmul_nbits_compute_dtype(mode.a_dtype, mode.accuracy_level);
    const Node node = make_node(rng, 192, 256, 4, 64, ZeroPointKind::kInteger, false, compute,
                                mode.accuracy_level);
    for (Tier tier : tiers) {
      Options options;
      options.tier = tier;
      std::unique_ptr<MatMulNBitsOp> op;
      ASSERT_TRUE(create_op(node, mode.a_dtype, options, &op).ok());
      for (int64_t m : {int64_t(1), int64_t(16), int64_t(256)}) {
        const std::vector<float> a =
            random_values(rng, static_cast<size_t>(m * 256), mode.a_dtype);
        const std::vector<float> bias = random_values(rng, 192, mode.a_dtype);
        const RunOutput r = run_once(*op, a, m, &bias);
        if (r.status.code() == StatusCode::kUnsupported) {
          ++skipped;
          continue;
        }
        ASSERT_TRUE(r.status.ok()) << tier_name(tier) << ": " << r.status.to_string();
        Plan plan;
        ASSERT_TRUE(op->plan_for(m, true, &plan).ok());
        if (tier != Tier::kAuto) EXPECT_EQ(plan.tier, tier);
        ++ran;
        EXPECT_TRUE(matches_reference(r.y, a, m, node.weight, &bias, mode.a_dtype, compute))
            << mode.name << " tier " << tier_name(tier) << " (ran " << tier_name(plan.tier)
            << ") m=" << m;
      }
    }
  }
  std::printf("[sailfish] MatMulNBitsOp tiers: %d runs, %d skipped (tier refused by plan())\n",
              ran, skipped);
  EXPECT_GT(ran, 0);
}

TEST(MatMulNBitsOp, ForcedChunkedFallback) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 206);
  for (const AMode& mode : kModes) {
    const DType compute = matmul_nbits_compute_dtype(mode.a_dtype, mode.accuracy_level);
    // N = 300: 5 chunks of 64 rows, the last one short; act-order and zero points too.
    const Node node = make_node(rng, 300, 256, 4, 32, ZeroPointKind::kInteger, true, compute,
                                mode.accuracy_level);
    Options options;
    options.tier = Tier::kDense;
    options.dense_force_chunked = true;
    options.dense_chunk_rows = 64;
    std::unique_ptr<MatMulNBitsOp> op;
    ASSERT_TRUE(create_op(node, mode.a_dtype, options, &op).ok());
    Plan plan;
    ASSERT_TRUE(op->plan_for(19, true, &plan).ok());
    EXPECT_EQ(plan.dense_chunk_rows, 64);
    const std::vector<float> a = random_values(rng, 19 * 256, mode.a_dtype);
    const std::vector<float> bias = random_values(rng, 300, mode.a_dtype);
    const RunOutput r = run_once(*op, a, 19, &bias);
    ASSERT_TRUE(r.status.ok()) << r.status.to_string();
    EXPECT_TRUE(matches_reference(r.y, a, 19, node.weight, &bias, mode.a_dtype, compute))
        << mode.name;
  }
}

// ---- prepacked form -----------------------------------------------------------------------------

TEST(MatMulNBitsOp, SaveLoadGivesBitwiseSameOutput) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 207);
  for (const AMode& mode : {kModes[0], kModes[2]}) {
    const DType compute = matmul_nbits_compute_dtype(mode.a_dtype, mode.accuracy_level);
    for (ZeroPointKind zk : {ZeroPointKind::kNone, ZeroPointKind::kInteger,
                             ZeroPointKind::kFloat}) {
      for (bool g_idx : {false, true}) {
        const Node node = make_node(rng, 136, 200, 4, 32, zk, g_idx, compute);
        std::unique_ptr<MatMulNBitsOp> op, loaded;
        ASSERT_TRUE(create_op(node, mode.a_dtype, Options(), &op).ok());
        std::vector<uint8_t> bytes;
        const Status saved = op->save(&bytes);
        ASSERT_TRUE(saved.ok()) << saved.to_string();
        // The saved bytes are exactly the host packer's, serialized.
        PackedWeight host;
        ASSERT_TRUE(pack(node.weight, compute, &host).ok());
        std::vector<uint8_t> host_bytes;
        ASSERT_TRUE(serialize(host, &host_bytes).ok());
        EXPECT_EQ(bytes, host_bytes);
        const Status st = MatMulNBitsOp::create_from_serialized(
            bytes.data(), bytes.size(), node.attributes, zk, g_idx, mode.a_dtype, Options(), -1,
            &loaded);
        ASSERT_TRUE(st.ok()) << st.to_string();
        const std::vector<float> a = random_values(rng, 7 * 200, mode.a_dtype);
        const std::vector<float> bias = random_values(rng, 136, mode.a_dtype);
        const RunOutput first = run_once(*op, a, 7, &bias);
        const RunOutput second = run_once(*loaded, a, 7, &bias);
        ASSERT_TRUE(first.status.ok() && second.status.ok());
        EXPECT_EQ(first.raw, second.raw) << mode.name << " zero=" << zero_point_kind_name(zk)
                                         << " g_idx=" << g_idx;
      }
    }
  }
}

TEST(MatMulNBitsOp, SerializedMismatchesAreErrors) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 208);
  const Node node = make_node(rng, 64, 128, 4, 32, ZeroPointKind::kInteger, true, DType::kF16);
  std::unique_ptr<MatMulNBitsOp> op;
  ASSERT_TRUE(create_op(node, DType::kF16, Options(), &op).ok());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(op->save(&bytes).ok());
  auto load = [&](const std::vector<uint8_t>& data, MatMulNBitsAttributes attributes,
                  ZeroPointKind zk, bool g_idx, DType a_dtype) {
    std::unique_ptr<MatMulNBitsOp> out;
    return MatMulNBitsOp::create_from_serialized(data.data(), data.size(), attributes, zk, g_idx,
                                                 a_dtype, Options(), -1, &out);
  };
  const MatMulNBitsAttributes good = node.attributes;
  EXPECT_TRUE(load(bytes, good, ZeroPointKind::kInteger, true, DType::kF16).ok());
  MatMulNBitsAttributes wrong_n = good;
  wrong_n.n = 128;
  EXPECT_FALSE(load(bytes, wrong_n, ZeroPointKind::kInteger, true, DType::kF16).ok());
  MatMulNBitsAttributes wrong_block = good;
  wrong_block.block_size = 64;
  EXPECT_FALSE(load(bytes, wrong_block, ZeroPointKind::kInteger, true, DType::kF16).ok());
  EXPECT_FALSE(load(bytes, good, ZeroPointKind::kNone, true, DType::kF16).ok());
  EXPECT_FALSE(load(bytes, good, ZeroPointKind::kInteger, false, DType::kF16).ok());
  // Packed for fp16 compute: bf16 activations (bf16 compute) must not load it.
  const Status dtype_status = load(bytes, good, ZeroPointKind::kInteger, true, DType::kBF16);
  EXPECT_FALSE(dtype_status.ok());
  EXPECT_NE(dtype_status.message().find("compute"), std::string::npos)
      << dtype_status.to_string();
  // fp32 activations with accuracy_level 2 compute in fp16: that one loads.
  MatMulNBitsAttributes fp16_compute = good;
  fp16_compute.accuracy_level = 2;
  EXPECT_TRUE(load(bytes, fp16_compute, ZeroPointKind::kInteger, true, DType::kF32).ok());
  std::vector<uint8_t> damaged = bytes;
  damaged[damaged.size() / 2] ^= 1;
  EXPECT_FALSE(load(damaged, good, ZeroPointKind::kInteger, true, DType::kF16).ok());
  damaged = bytes;
  damaged.resize(bytes.size() - 3);
  EXPECT_FALSE(load(damaged, good, ZeroPointKind::kInteger, true, DType::kF16).ok());
}

// ---- threads, empty input -----------------------------------------------------------------------

TEST(MatMulNBitsOp, ConcurrentRunsOnSeveralStreams) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 209);
  const Node node = make_node(rng, 128, 192, 4, 64, ZeroPointKind::kNone, false, DType::kBF16);
  std::unique_ptr<MatMulNBitsOp> op;
  ASSERT_TRUE(create_op(node, DType::kBF16, Options(), &op).ok());
  const int64_t ms[] = {1, 7, 64, 7, 130, 1};
  std::vector<std::vector<float>> inputs;
  for (int64_t m : ms) inputs.push_back(random_values(rng, static_cast<size_t>(m * 192),
                                                      DType::kBF16));
  std::vector<RunOutput> outputs(std::size(ms));
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < std::size(ms); ++i) {
    threads.emplace_back([&, i] {
      cudaSetDevice(device);  // the current device is per thread
      cudaStream_t stream = nullptr;
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
      outputs[i] = run_once(*op, inputs[i], ms[i], nullptr, stream);
      cudaStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < std::size(ms); ++i) {
    ASSERT_TRUE(outputs[i].status.ok()) << outputs[i].status.to_string();
    EXPECT_TRUE(matches_reference(outputs[i].y, inputs[i], ms[i], node.weight, nullptr,
                                  DType::kBF16, DType::kBF16))
        << "thread " << i;
  }
}

TEST(MatMulNBitsOp, EmptyInputIsANoOp) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 210);
  const Node node = make_node(rng, 64, 64, 4, 32, ZeroPointKind::kNone, false, DType::kF16);
  std::unique_ptr<MatMulNBitsOp> op;
  ASSERT_TRUE(create_op(node, DType::kF16, Options(), &op).ok());
  size_t bytes = 0;
  ASSERT_TRUE(op->workspace_size(0, false, &bytes).ok());
  DeviceBuffer ws(bytes);
  EXPECT_TRUE(op->run(nullptr, 0, nullptr, nullptr, ws.get(), bytes, nullptr).ok());
}

// ---- measured planning -------------------------------------------------------------------------

// tune(m) installs the report's chosen plan for (m, bias): run() computes the product with it,
// the rule cache's size bound does not evict it, the other bias key keeps its rule plan (16-bit A;
// fp32 A adds the bias outside the product, so both keys are one plan), and clear_plan_cache()
// drops it. q7.qkv of Qwen2.5-7B (3584 x 4608), where the rule's depth was not the fastest (v31).
TEST(MatMulNBitsOp, TunedPlanServesLaterRuns) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 213);
  TuneOptions quick;
  quick.launches = 8;
  quick.rounds = 3;
  for (const AMode& mode : {kModes[1], kModes[2]}) {  // bf16, fp32 (bf16 compute)
    const DType compute = matmul_nbits_compute_dtype(mode.a_dtype, mode.accuracy_level);
    const Node node = make_node(rng, 4608, 3584, 4, 128, ZeroPointKind::kNone, false, compute);
    std::unique_ptr<MatMulNBitsOp> op;
    ASSERT_TRUE(create_op(node, mode.a_dtype, Options(), &op).ok());
    for (const int64_t m : {int64_t(1), int64_t(16)}) {
      const std::string where = std::string(mode.name) + " m=" + std::to_string(m);
      TuneReport report;
      const Status tuned = op->tune(m, true, nullptr, quick, &report);
      ASSERT_TRUE(tuned.ok()) << where << ": " << tuned.to_string();
      ASSERT_GT(report.candidates.size(), 1u) << where;
      const Plan& chosen = report.candidates[static_cast<size_t>(report.chosen)].plan;
      Plan p;
      ASSERT_TRUE(op->plan_for(m, true, &p).ok());
      EXPECT_TRUE(is_tuned(p)) << where << ": " << p.reason;
      EXPECT_EQ(p.tier, chosen.tier) << where;
      EXPECT_EQ(p.decode.splits, chosen.decode.splits) << where;
      EXPECT_EQ(p.decode.epilogue, chosen.decode.epilogue) << where;
      EXPECT_EQ(p.prefill.tokens, chosen.prefill.tokens) << where;
      EXPECT_EQ(p.problem.has_bias, mode.a_dtype != DType::kF32) << where;
      ASSERT_TRUE(op->plan_for(m, false, &p).ok());
      EXPECT_EQ(is_tuned(p), mode.a_dtype == DType::kF32) << where << ": " << p.reason;
      // More distinct M than the rule cache holds (256): it empties, the tuned plan stays.
      size_t bytes = 0;
      for (int64_t other = 100; other < 400; ++other) {
        ASSERT_TRUE(op->workspace_size(other, true, &bytes).ok());
      }
      ASSERT_TRUE(op->plan_for(m, true, &p).ok());
      EXPECT_TRUE(is_tuned(p)) << where << ": evicted (" << p.reason << ")";
      const std::vector<float> a = random_values(rng, static_cast<size_t>(m * 3584), mode.a_dtype);
      const std::vector<float> bias = random_values(rng, 4608, mode.a_dtype);
      const RunOutput r = run_once(*op, a, m, &bias);
      ASSERT_TRUE(r.status.ok()) << where << ": " << r.status.to_string();
      EXPECT_TRUE(matches_reference(r.y, a, m, node.weight, &bias, mode.a_dtype, compute))
          << where << " (" << chosen.reason << ")";
    }
    op->clear_plan_cache();
    Plan p;
    ASSERT_TRUE(op->plan_for(1, true, &p).ok());
    EXPECT_FALSE(is_tuned(p)) << mode.name << ": " << p.reason;
  }
}

// A tuning's chosen options, given to another operator of the same node through plan_with(), give
// the same launch and, in deterministic mode, bitwise the same output: how an engine reuses a
// tuning across processes without timing again.
TEST(MatMulNBitsOp, TunedOptionsReinstalledElsewhereGiveTheSameOutput) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 215);
  TuneOptions quick;
  quick.launches = 8;
  quick.rounds = 3;
  Options deterministic;
  deterministic.deterministic = true;
  const Node node = make_node(rng, 4608, 3584, 4, 128, ZeroPointKind::kNone, false, DType::kBF16);
  std::unique_ptr<MatMulNBitsOp> tuned_op, other_op;
  ASSERT_TRUE(create_op(node, DType::kBF16, deterministic, &tuned_op).ok());
  ASSERT_TRUE(create_op(node, DType::kBF16, deterministic, &other_op).ok());
  for (const int64_t m : {int64_t(1), int64_t(16)}) {
    const std::string where = "m=" + std::to_string(m);
    TuneReport report;
    ASSERT_TRUE(tuned_op->tune(m, true, nullptr, quick, &report).ok()) << where;
    const Options& chosen = report.candidates[static_cast<size_t>(report.chosen)].options;
    ASSERT_TRUE(other_op->plan_with(m, true, chosen).ok()) << where;
    Plan a, b;
    ASSERT_TRUE(tuned_op->plan_for(m, true, &a).ok());
    ASSERT_TRUE(other_op->plan_for(m, true, &b).ok());
    EXPECT_EQ(b.reason.rfind("given options: ", 0), 0u) << where << ": " << b.reason;
    EXPECT_EQ(a.tier, b.tier) << where;
    EXPECT_EQ(a.decode.splits, b.decode.splits) << where;
    EXPECT_EQ(a.decode.epilogue, b.decode.epilogue) << where;
    EXPECT_EQ(a.decode.warp_stages, b.decode.warp_stages) << where;
    EXPECT_EQ(a.prefill.tokens, b.prefill.tokens) << where;
    EXPECT_EQ(a.prefill.splits, b.prefill.splits) << where;
    EXPECT_TRUE(b.deterministic) << where;
    const std::vector<float> x = random_values(rng, static_cast<size_t>(m * 3584), DType::kBF16);
    const std::vector<float> bias = random_values(rng, 4608, DType::kBF16);
    const RunOutput ra = run_once(*tuned_op, x, m, &bias), rb = run_once(*other_op, x, m, &bias);
    ASSERT_TRUE(ra.status.ok() && rb.status.ok()) << where;
    EXPECT_TRUE(ra.raw == rb.raw) << where << ": outputs differ (" << a.reason << ")";
    EXPECT_TRUE(matches_reference(rb.y, x, m, node.weight, &bias, DType::kBF16, DType::kBF16))
        << where;
  }
}

}  // namespace
}  // namespace sailfish
