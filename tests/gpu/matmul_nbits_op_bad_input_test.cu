// MatMulNBitsOp refuses bad construction, run and tune arguments with a Status that says what was
// wrong (on the GPU: the operator uploads its weight at construction).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_helpers.h"
#include "matmul_nbits_op_helpers.h"
#include "sailfish/matmul_nbits.h"
#include "sailfish/tune.h"

namespace sailfish {
namespace {

using testing::create_op;
using testing::DeviceBuffer;
using testing::is_tuned;
using testing::make_node;
using testing::Node;
using testing::views;

TEST(MatMulNBitsOp, BadConstructionIsRefused) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 211);
  const Node node = make_node(rng, 64, 100, 4, 32, ZeroPointKind::kInteger, false, DType::kF16);
  struct Case {
    const char* name;
    MatMulNBitsAttributes attributes;
    MatMulNBitsWeights weights;
    DType a_dtype;
    const char* expect;
  };
  std::vector<Case> cases;
  auto base = [&] { return Case{"", node.attributes, views(node.tensors), DType::kF16, ""}; };
  Case c = base();
  c.name = "B one byte short";
  c.weights.b_bytes -= 1;
  c.expect = "B has";
  cases.push_back(c);
  c = base();
  c.name = "N attribute larger than the tensors";
  c.attributes.n = 65;
  c.expect = "expected";
  cases.push_back(c);
  c = base();
  c.name = "K attribute implies more blocks";
  c.attributes.k = 200;
  c.expect = "expected";
  cases.push_back(c);
  c = base();
  c.name = "scales count wrong";
  c.weights.scales_count += 1;
  c.expect = "scales has";
  cases.push_back(c);
  c = base();
  c.name = "block_size 48";
  c.attributes.block_size = 48;
  c.expect = "block_size";
  cases.push_back(c);
  c = base();
  c.name = "bits 3";
  c.attributes.bits = 3;
  c.expect = "bits";
  cases.push_back(c);
  c = base();
  c.name = "accuracy_level 9";
  c.attributes.accuracy_level = 9;
  c.expect = "accuracy_level";
  cases.push_back(c);
  c = base();
  c.name = "null B";
  c.weights.b = nullptr;
  c.expect = "null";
  cases.push_back(c);
  c = base();
  c.name = "null scales";
  c.weights.scales = nullptr;
  c.expect = "null";
  cases.push_back(c);
  c = base();
  c.name = "zero kind integer without its tensor";
  c.weights.zero_points_packed = nullptr;
  c.weights.zero_points_packed_bytes = 0;
  c.expect = "zero_points_packed";
  cases.push_back(c);
  c = base();
  c.name = "zero kind none with a tensor";
  c.weights.zero_kind = ZeroPointKind::kNone;
  c.expect = "zero_points";
  cases.push_back(c);
  c = base();
  c.name = "activation dtype 7";
  c.a_dtype = static_cast<DType>(7);
  c.expect = "activation dtype";
  cases.push_back(c);
  std::vector<int32_t> unbalanced(100, 0);  // every row in group 0: not the GPTQ balance rule
  c = base();
  c.name = "unbalanced g_idx";
  c.weights.g_idx = unbalanced.data();
  c.weights.g_idx_count = unbalanced.size();
  c.expect = "g_idx";
  cases.push_back(c);
  std::vector<int32_t> short_g_idx(99, 0);
  c = base();
  c.name = "g_idx of the wrong length";
  c.weights.g_idx = short_g_idx.data();
  c.weights.g_idx_count = short_g_idx.size();
  c.expect = "g_idx";
  cases.push_back(c);
  for (const Case& bad : cases) {
    std::unique_ptr<MatMulNBitsOp> op;
    const Status st =
        MatMulNBitsOp::create(bad.attributes, bad.weights, bad.a_dtype, Options(), -1, &op);
    EXPECT_FALSE(st.ok()) << bad.name << ": accepted";
    EXPECT_TRUE(op == nullptr) << bad.name;
    EXPECT_NE(st.message().find(bad.expect), std::string::npos)
        << bad.name << ": " << st.to_string();
  }
  std::unique_ptr<MatMulNBitsOp> op;
  const Status unsupported_dtype = MatMulNBitsOp::create(node.attributes, views(node.tensors),
                                                         static_cast<DType>(7), Options(), -1, &op);
  EXPECT_EQ(unsupported_dtype.code(), StatusCode::kUnsupported);
  EXPECT_FALSE(MatMulNBitsOp::create(node.attributes, views(node.tensors), DType::kF16, Options(),
                                     -1, nullptr)
                   .ok());
  Options bad_options;
  bad_options.dense_chunk_rows = 3;
  EXPECT_FALSE(
      MatMulNBitsOp::create(node.attributes, views(node.tensors), DType::kF16, bad_options, -1, &op)
          .ok());
  EXPECT_FALSE(MatMulNBitsOp::create(node.attributes, views(node.tensors), DType::kF16, Options(),
                                     1 << 20, &op)
                   .ok());
}

TEST(MatMulNBitsOp, BadRunArgumentsAreRefused) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 212);
  const Node node = make_node(rng, 64, 128, 4, 32, ZeroPointKind::kNone, false, DType::kF16);
  // The dense tier, so that the workspace is not empty (decode may need none at small M).
  Options dense;
  dense.tier = Tier::kDense;
  std::unique_ptr<MatMulNBitsOp> op;
  ASSERT_TRUE(create_op(node, DType::kF16, dense, &op).ok());
  size_t bytes = 0;
  ASSERT_TRUE(op->workspace_size(4, false, &bytes).ok());
  ASSERT_GT(bytes, 0u);
  DeviceBuffer a(4 * 128 * 2 + 16), y(4 * 64 * 2 + 16), ws(bytes + 256);
  EXPECT_TRUE(op->run(a.get(), 4, nullptr, y.get(), ws.get(), bytes, nullptr).ok());
  EXPECT_FALSE(op->run(nullptr, 4, nullptr, y.get(), ws.get(), bytes, nullptr).ok());
  EXPECT_FALSE(op->run(a.get(), 4, nullptr, nullptr, ws.get(), bytes, nullptr).ok());
  EXPECT_FALSE(op->run(a.get(), -1, nullptr, y.get(), ws.get(), bytes, nullptr).ok());
  EXPECT_FALSE(op->run(a.get(), 4, nullptr, y.get(), ws.get(), bytes - 1, nullptr).ok());
  EXPECT_FALSE(op->run(a.get(), 4, nullptr, y.get(), nullptr, bytes, nullptr).ok());
  EXPECT_FALSE(
      op->run(a.get(), 4, nullptr, y.get(), static_cast<char*>(ws.get()) + 16, bytes, nullptr)
          .ok());
  EXPECT_FALSE(
      op->run(static_cast<char*>(a.get()) + 2, 4, nullptr, y.get(), ws.get(), bytes, nullptr).ok());
  EXPECT_FALSE(op->workspace_size(-1, false, &bytes).ok());
  EXPECT_FALSE(op->workspace_size(1, false, nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(MatMulNBitsOp, BadTuneArgumentsAreRefused) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 214);
  const Node node = make_node(rng, 256, 512, 4, 32, ZeroPointKind::kNone, false, DType::kF16);
  std::unique_ptr<MatMulNBitsOp> op;
  ASSERT_TRUE(create_op(node, DType::kF16, Options(), &op).ok());
  auto expect_invalid = [](const Status& st, const char* needle) {
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.to_string();
  };
  expect_invalid(op->tune(0, false, nullptr), "must be >= 1");
  expect_invalid(op->tune(-3, false, nullptr), "must be >= 1");
  TuneOptions bad;
  bad.rounds = 0;
  expect_invalid(op->tune(1, false, nullptr, bad), "rounds");
  Options bad_options;
  bad_options.decode_splits = 0;
  expect_invalid(op->plan_with(1, false, bad_options), "decode_splits");
  expect_invalid(op->plan_with(-1, false, Options()), "must be >= 0");
  // Failed calls leave the rule's plan in place.
  Plan p;
  ASSERT_TRUE(op->plan_for(1, false, &p).ok());
  EXPECT_FALSE(is_tuned(p)) << p.reason;
  EXPECT_EQ(p.reason.rfind("given options: ", 0), std::string::npos) << p.reason;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace sailfish
