// The MoE align step (moe_align) and the routing checks: a hand-worked example, expert
// parallelism, random routings against the invariants the kernels rely on, the block bound, and
// every malformed input.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "sailfish/moe.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

MoeRouting routing_of(int64_t tokens, int top_k, int experts, std::vector<int32_t> ids,
                      std::vector<int32_t> map = {}) {
  MoeRouting r;
  r.tokens = tokens;
  r.top_k = top_k;
  r.experts = experts;
  r.topk_ids = std::move(ids);
  r.topk_weights.assign(r.topk_ids.size(), 0.5f);
  r.expert_map = std::move(map);
  return r;
}

std::vector<int32_t> padded(std::vector<int32_t> rows, size_t size) {
  rows.resize(size, -1);
  return rows;
}

TEST(MoeAlign, HandWorkedExample) {
  // Choice rows: token 0 -> experts 1, 3 (rows 0, 1); token 1 -> 1, 0 (rows 2, 3);
  // token 2 -> 3, 1 (rows 4, 5). Expert 2 gets nothing and so no block.
  const MoeRouting r = routing_of(3, 2, 4, {1, 3, 1, 0, 3, 1});
  MoeAlignment a;
  ASSERT_TRUE(moe_align(r, 8, &a).ok());
  EXPECT_EQ(a.block_rows, 8);
  EXPECT_EQ(a.block_experts, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(a.expert_rows, (std::vector<int32_t>{1, 3, 0, 2}));
  std::vector<int32_t> expected = padded({3}, 8);
  const std::vector<int32_t> expert1 = padded({0, 2, 5}, 8), expert3 = padded({1, 4}, 8);
  expected.insert(expected.end(), expert1.begin(), expert1.end());
  expected.insert(expected.end(), expert3.begin(), expert3.end());
  EXPECT_EQ(a.sorted_rows, expected);
  EXPECT_EQ(a.choice_slots, (std::vector<int32_t>{8, 16, 9, 0, 17, 10}));
}

TEST(MoeAlign, ExpertWithMoreRowsThanABlockTakesSeveralBlocks) {
  // 20 tokens, all to expert 2 first and expert 0 second: 20 rows each, 3 blocks of 8 each.
  std::vector<int32_t> ids;
  for (int t = 0; t < 20; ++t) ids.insert(ids.end(), {2, 0});
  MoeAlignment a;
  ASSERT_TRUE(moe_align(routing_of(20, 2, 3, ids), 8, &a).ok());
  EXPECT_EQ(a.block_experts, (std::vector<int32_t>{0, 0, 0, 2, 2, 2}));
  ASSERT_EQ(a.sorted_rows.size(), 48u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(a.sorted_rows[static_cast<size_t>(i)], 2 * i + 1);
    EXPECT_EQ(a.sorted_rows[static_cast<size_t>(24 + i)], 2 * i);
  }
  for (int i = 20; i < 24; ++i) {
    EXPECT_EQ(a.sorted_rows[static_cast<size_t>(i)], -1);
    EXPECT_EQ(a.sorted_rows[static_cast<size_t>(24 + i)], -1);
  }
}

TEST(MoeAlign, ExpertMapKeepsThisRanksExpertsInLocalOrder) {
  // The rank holds global experts 3 (local 0) and 1 (local 1); 0 and 2 live elsewhere.
  const MoeRouting r = routing_of(3, 2, 4, {1, 3, 1, 0, 3, 1}, {-1, 1, -1, 0});
  ASSERT_TRUE(validate(r).ok());
  EXPECT_EQ(r.local_experts(), 2);
  MoeAlignment a;
  ASSERT_TRUE(moe_align(r, 16, &a).ok());
  EXPECT_EQ(a.block_experts, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(a.expert_rows, (std::vector<int32_t>{2, 3}));
  std::vector<int32_t> expected = padded({1, 4}, 16);
  const std::vector<int32_t> second = padded({0, 2, 5}, 16);
  expected.insert(expected.end(), second.begin(), second.end());
  EXPECT_EQ(a.sorted_rows, expected);
  EXPECT_EQ(a.choice_slots, (std::vector<int32_t>{16, 0, 17, -1, 1, 18}));
}

TEST(MoeAlign, NoTokensGivesNoBlocks) {
  MoeAlignment a;
  ASSERT_TRUE(moe_align(routing_of(0, 4, 8, {}), 16, &a).ok());
  EXPECT_EQ(a.blocks(), 0);
  EXPECT_TRUE(a.sorted_rows.empty());
  EXPECT_EQ(a.expert_rows, std::vector<int32_t>(8, 0));
}

// What the MoE kernels take for granted, on routings drawn at random: every local choice row in
// exactly one slot, nothing of other ranks, blocks of one expert each in ascending expert order,
// rows ascending inside an expert, padding only at the end of an expert's last block, and never
// more blocks than moe_max_blocks (which device buffers are sized by).
TEST(MoeAlign, RandomRoutingsKeepTheKernelsInvariants) {
  std::mt19937_64 rng(testing::test_seed());
  for (int trial = 0; trial < 500; ++trial) {
    const int experts = std::uniform_int_distribution<int>(1, 80)(rng);
    const int top_k = std::uniform_int_distribution<int>(1, std::min(experts, 8))(rng);
    const int64_t tokens = std::uniform_int_distribution<int64_t>(0, 300)(rng);
    const int block_rows = kMoeBlockRowChoices[std::uniform_int_distribution<int>(0, 2)(rng)];
    const MoeRouting r =
        testing::random_routing(rng, tokens, top_k, experts, std::bernoulli_distribution(0.5)(rng));
    const std::string name =
        "trial " + std::to_string(trial) + ": tokens " + std::to_string(tokens) + ", top_k " +
        std::to_string(top_k) + ", experts " + std::to_string(experts) + ", local " +
        std::to_string(r.local_experts()) + ", block " + std::to_string(block_rows);
    MoeAlignment a;
    const Status status = moe_align(r, block_rows, &a);
    ASSERT_TRUE(status.ok()) << name << ": " << status.to_string();
    ASSERT_EQ(a.sorted_rows.size(), static_cast<size_t>(a.blocks() * block_rows)) << name;
    ASSERT_LE(a.blocks(), moe_max_blocks(tokens, top_k, r.local_experts(), block_rows)) << name;

    std::vector<int> slots_of_row(static_cast<size_t>(r.choices()), 0);
    std::vector<int32_t> rows_seen(static_cast<size_t>(r.local_experts()), 0);
    for (int64_t b = 0; b < a.blocks(); ++b) {
      const int32_t expert = a.block_experts[static_cast<size_t>(b)];
      if (b > 0) ASSERT_LE(a.block_experts[static_cast<size_t>(b - 1)], expert) << name;
      const bool last_of_expert =
          b + 1 == a.blocks() || a.block_experts[static_cast<size_t>(b + 1)] != expert;
      bool padding_started = false;
      int32_t previous = -1;
      for (int i = 0; i < block_rows; ++i) {
        const int32_t row = a.sorted_rows[static_cast<size_t>(b * block_rows + i)];
        if (row < 0) {
          ASSERT_EQ(row, -1) << name;
          ASSERT_TRUE(last_of_expert) << name << ": padding inside block " << b;
          ASSERT_GT(i, 0) << name << ": block " << b << " holds no row";
          padding_started = true;
          continue;
        }
        ASSERT_FALSE(padding_started) << name << ": a row after padding in block " << b;
        ASSERT_LT(row, r.choices()) << name;
        ASSERT_EQ(r.local_expert(r.topk_ids[static_cast<size_t>(row)]), expert) << name;
        if (i > 0) ASSERT_GT(row, previous) << name;
        previous = row;
        ++slots_of_row[static_cast<size_t>(row)];
        ++rows_seen[static_cast<size_t>(expert)];
      }
    }
    ASSERT_EQ(a.choice_slots.size(), static_cast<size_t>(r.choices())) << name;
    for (int64_t row = 0; row < r.choices(); ++row) {
      const bool local = r.local_expert(r.topk_ids[static_cast<size_t>(row)]) >= 0;
      ASSERT_EQ(slots_of_row[static_cast<size_t>(row)], local ? 1 : 0) << name << ", row " << row;
      const int32_t slot = a.choice_slots[static_cast<size_t>(row)];
      if (local) {
        ASSERT_EQ(a.sorted_rows[static_cast<size_t>(slot)], row) << name << ", row " << row;
      } else {
        ASSERT_EQ(slot, -1) << name << ", row " << row;
      }
    }
    ASSERT_EQ(rows_seen, a.expert_rows) << name;
  }
}

TEST(MoeAlign, MaxBlocksIsReachedAndNeverPassed) {
  // Every local expert gets one row more than a whole number of blocks: the bound exactly.
  EXPECT_EQ(moe_max_blocks(0, 4, 8, 16), 0);
  EXPECT_EQ(moe_max_blocks(1, 4, 60, 16), 4);  // 4 rows, 4 experts with one row each
  EXPECT_EQ(moe_max_blocks(1, 8, 256, 8), 8);
  EXPECT_EQ(moe_max_blocks(1000, 2, 4, 16), 128);  // (2000 + 4 * 15) / 16 = 128.75
  EXPECT_EQ(moe_max_blocks(64, 1, 4, 16), 7);      // (64 + 4 * 15) / 16 = 7.75
  // A routing that attains the last bound: counts 17, 17, 17 and 13 give 2 + 2 + 2 + 1 blocks.
  std::vector<int32_t> ids;
  for (int e = 0; e < 4; ++e) ids.insert(ids.end(), e < 3 ? 17 : 13, e);
  MoeAlignment a;
  ASSERT_TRUE(moe_align(routing_of(64, 1, 4, ids), 16, &a).ok());
  EXPECT_EQ(a.blocks(), 7);
}

TEST(MoeAlignLayout, HoldsTheWorstRoutingInAlignedArrays) {
  MoeAlignLayout layout;
  ASSERT_TRUE(MoeAlignLayout::make(3, 4, 60, 16, &layout).ok());
  EXPECT_EQ(layout.max_blocks, 12);  // 12 rows, each able to open its own expert's block
  EXPECT_EQ(layout.sorted_rows_offset, 0u);
  EXPECT_EQ(layout.block_experts_offset, 12u * 16 * 4);
  EXPECT_EQ(layout.expert_rows_offset, layout.block_experts_offset + 48);
  EXPECT_EQ(layout.choice_slots_offset, layout.expert_rows_offset + 240);
  EXPECT_EQ(layout.counters_offset, layout.choice_slots_offset + 48);
  EXPECT_EQ(layout.bytes, layout.counters_offset + 16);

  std::mt19937_64 rng(testing::test_seed());
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t tokens = std::uniform_int_distribution<int64_t>(0, 5000)(rng);
    const int top_k = std::uniform_int_distribution<int>(1, 8)(rng);
    const int experts = std::uniform_int_distribution<int>(1, kMoeMaxLocalExperts)(rng);
    const int block_rows = kMoeBlockRowChoices[trial % 3];
    ASSERT_TRUE(MoeAlignLayout::make(tokens, top_k, experts, block_rows, &layout).ok());
    const size_t offsets[] = {layout.sorted_rows_offset, layout.block_experts_offset,
                              layout.expert_rows_offset, layout.choice_slots_offset,
                              layout.counters_offset,    layout.bytes};
    const size_t sizes[] = {size_t(layout.max_blocks * block_rows), size_t(layout.max_blocks),
                            size_t(experts), size_t(tokens * top_k), size_t(kMoeAlignCounters)};
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(offsets[i] % 16, 0u);
      EXPECT_GE(offsets[i + 1], offsets[i] + 4 * sizes[i]) << "array " << i << " overlaps the next";
    }
    EXPECT_EQ(layout.max_blocks, moe_max_blocks(tokens, top_k, experts, block_rows));
  }

  EXPECT_EQ(MoeAlignLayout::make(1, 1, 0, 16, &layout).code(), StatusCode::kUnsupported);
  EXPECT_EQ(MoeAlignLayout::make(1, 1, kMoeMaxLocalExperts + 1, 16, &layout).code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(MoeAlignLayout::make(1, 1, 8, 12, &layout).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MoeAlignLayout::make(1, 1, 8, 64, &layout).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MoeAlignLayout::make(-1, 1, 8, 16, &layout).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MoeAlignLayout::make(1, 0, 8, 16, &layout).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MoeAlignLayout::make(int64_t(1) << 28, 8, 8, 16, &layout).code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(MoeAlignLayout::make(1, 1, 8, 16, nullptr).code(), StatusCode::kInvalidArgument);
}

TEST(MoeAlign, MalformedRoutingsAreRefusedWithTheReason) {
  struct Case {
    const char* what;
    MoeRouting routing;
    const char* message;
    StatusCode code = StatusCode::kInvalidArgument;
  };
  MoeRouting nan_weight = routing_of(1, 2, 4, {0, 1});
  nan_weight.topk_weights[1] = std::numeric_limits<float>::quiet_NaN();
  MoeRouting short_weights = routing_of(2, 2, 4, {0, 1, 2, 3});
  short_weights.topk_weights.pop_back();
  const Case cases[] = {
      {"negative tokens", routing_of(-1, 2, 4, {}), "tokens is -1"},
      {"top_k 0", routing_of(1, 0, 4, {}), "top_k is 0"},
      {"no experts", routing_of(1, 1, 0, {0}), "experts is 0"},
      {"top_k above experts", routing_of(1, 5, 4, {0, 1, 2, 3, 0}), "top_k 5 exceeds"},
      {"too many choices", routing_of(int64_t(1) << 28, 8, 8, {}), "at most 2^30",
       StatusCode::kUnsupported},
      {"ids short", routing_of(2, 2, 4, {0, 1, 2}), "both must hold tokens * top_k = 4"},
      {"weights short", short_weights, "topk_weights 3"},
      {"id past the experts", routing_of(2, 2, 4, {0, 1, 2, 4}), "topk_ids[1][1] is 4"},
      {"negative id", routing_of(2, 2, 4, {0, -1, 2, 3}), "topk_ids[0][1] is -1"},
      {"NaN weight", nan_weight, "topk_weights[0][1] is not finite"},
      {"map short", routing_of(1, 1, 4, {0}, {0, 1}), "one per expert (4)"},
      {"map repeats", routing_of(1, 1, 4, {0}, {0, 0, -1, -1}), "expert_map[1] is 0"},
      {"map skips an index", routing_of(1, 1, 4, {0}, {0, 2, -1, -1}), "expert_map[1] is 2"},
      {"map below -1", routing_of(1, 1, 4, {0}, {0, -2, -1, -1}), "expert_map[1] is -2"},
  };
  for (const Case& c : cases) {
    const Status status = validate(c.routing);
    EXPECT_EQ(status.code(), c.code) << c.what;
    EXPECT_NE(status.message().find(c.message), std::string::npos)
        << c.what << ": " << status.message();
    MoeAlignment a;
    EXPECT_FALSE(moe_align(c.routing, 16, &a).ok()) << c.what;
  }
  MoeAlignment a;
  const Status block = moe_align(routing_of(1, 1, 4, {0}), 24, &a);
  EXPECT_EQ(block.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(block.message().find("block_rows is 24; accepted: 8, 16 or 32"), std::string::npos)
      << block.message();
  EXPECT_EQ(moe_align(routing_of(1, 1, 4, {0}), 16, nullptr).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sailfish
