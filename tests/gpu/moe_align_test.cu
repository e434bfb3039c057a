// The device align step (moe_align_on_device) against the host moe_align, array for array, on
// random routings: skewed picks, expert parallelism, every block size, decode and prefill sizes.
// The buffer is poisoned before every run, so a slot the kernel fails to write shows up; a run is
// repeated to show the arrays do not depend on timing. Out-of-range ids are skipped and counted.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_helpers.h"
#include "sailfish/moe.h"
#include "sailfish/moe_gpu.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::DeviceBuffer;

// What the device wrote, read back from the buffer at the layout's offsets.
struct DeviceAlignment {
  std::vector<int32_t> sorted_rows, block_experts, expert_rows, choice_slots, counters;
};

DeviceAlignment read_back(const DeviceBuffer& buffer, const MoeAlignLayout& layout) {
  const std::vector<uint8_t> bytes = buffer.download<uint8_t>();
  const auto ints = [&](size_t offset, int64_t count) {
    std::vector<int32_t> out(static_cast<size_t>(count));
    std::memcpy(out.data(), bytes.data() + offset, out.size() * sizeof(int32_t));
    return out;
  };
  return {ints(layout.sorted_rows_offset, layout.max_blocks * layout.block_rows),
          ints(layout.block_experts_offset, layout.max_blocks),
          ints(layout.expert_rows_offset, layout.local_experts),
          ints(layout.choice_slots_offset,
               (layout.counters_offset - layout.choice_slots_offset) / sizeof(int32_t)),
          ints(layout.counters_offset, kMoeAlignCounters)};
}

// Runs the device align step for the routing `r` describes, on the device arrays `ids` and `map`
// (the routing's own, or with bad entries planted), after poisoning the buffer, and returns what
// it wrote.
::testing::AssertionResult align_on_device(const MoeRouting& r, const std::vector<int32_t>& ids,
                                           const std::vector<int32_t>& map, int block_rows,
                                           MoeAlignLayout* layout, DeviceAlignment* out) {
  const Status made =
      MoeAlignLayout::make(r.tokens, r.top_k, r.local_experts(), block_rows, layout);
  if (!made.ok()) return ::testing::AssertionFailure() << made.to_string();
  DeviceBuffer d_ids, d_map, buffer(layout->bytes);
  if (!d_ids.upload(ids) || !d_map.upload(map)) {
    return ::testing::AssertionFailure() << "upload failed";
  }
  if (cudaMemset(buffer.get(), 0x5a, layout->bytes) != cudaSuccess) {
    return ::testing::AssertionFailure() << "poison failed";
  }
  DeviceMoeRouting routing;
  routing.tokens = r.tokens;
  routing.top_k = r.top_k;
  routing.experts = r.experts;
  routing.local_experts = r.local_experts();
  routing.topk_ids = d_ids.as<int32_t>();
  routing.expert_map = map.empty() ? nullptr : d_map.as<int32_t>();
  const Status run = moe_align_on_device(routing, *layout, buffer.get(), buffer.bytes(), nullptr);
  if (!run.ok()) return ::testing::AssertionFailure() << run.to_string();
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) return ::testing::AssertionFailure() << cudaGetErrorString(err);
  *out = read_back(buffer, *layout);
  return ::testing::AssertionSuccess();
}

// The device arrays equal the host alignment, padded with -1 to the layout's worst case.
void expect_same(const MoeAlignment& host, const DeviceAlignment& device,
                 const MoeAlignLayout& layout, int invalid, const std::string& what) {
  std::vector<int32_t> rows = host.sorted_rows, experts = host.block_experts;
  ASSERT_LE(host.blocks(), layout.max_blocks) << what;
  rows.resize(static_cast<size_t>(layout.max_blocks * layout.block_rows), -1);
  experts.resize(static_cast<size_t>(layout.max_blocks), -1);
  EXPECT_EQ(device.counters[kMoeBlocksMade], host.blocks()) << what;
  EXPECT_EQ(device.counters[kMoeInvalidChoices], invalid) << what;
  for (int c = kMoeInvalidChoices + 1; c < kMoeAlignCounters; ++c) {
    EXPECT_EQ(device.counters[static_cast<size_t>(c)], 0) << what << ", reserved counter " << c;
  }
  EXPECT_EQ(device.block_experts, experts) << what;
  EXPECT_EQ(device.expert_rows, host.expert_rows) << what;
  std::vector<int32_t> slots = device.choice_slots;  // the array is padded to 16 bytes
  ASSERT_GE(slots.size(), host.choice_slots.size()) << what;
  slots.resize(host.choice_slots.size());
  EXPECT_EQ(slots, host.choice_slots) << what;
  ASSERT_EQ(device.sorted_rows.size(), rows.size()) << what;
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(device.sorted_rows[i], rows[i]) << what << ", slot " << i;
  }
}

TEST(MoeAlignGpu, MatchesTheHostOnRandomRoutings) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed());
  struct Size {
    int64_t tokens;
    int top_k, experts;
  };
  // Decode (one to a few dozen tokens), a prefill batch, and the large-expert-count models.
  const Size sizes[] = {{1, 4, 60},   {1, 8, 256},    {7, 2, 8}, {16, 8, 128}, {64, 6, 64},
                        {333, 2, 16}, {2048, 8, 256}, {1, 1, 1}, {0, 4, 8},    {5, 16, 4096}};
  int case_index = 0;
  for (const Size& size : sizes) {
    for (int block_rows : kMoeBlockRowChoices) {
      for (bool expert_parallel : {false, true}) {
        const int top_k = std::min(size.top_k, size.experts);
        const MoeRouting r =
            testing::random_routing(rng, size.tokens, top_k, size.experts, expert_parallel);
        const std::string what =
            "tokens " + std::to_string(size.tokens) + ", top_k " + std::to_string(top_k) +
            ", experts " + std::to_string(size.experts) + ", local " +
            std::to_string(r.local_experts()) + ", block " + std::to_string(block_rows);
        MoeAlignment host;
        ASSERT_TRUE(moe_align(r, block_rows, &host).ok()) << what;
        MoeAlignLayout layout;
        DeviceAlignment first, second;
        ASSERT_TRUE(align_on_device(r, r.topk_ids, r.expert_map, block_rows, &layout, &first))
            << what;
        expect_same(host, first, layout, 0, what);
        if (case_index++ % 4 == 0) {  // again: the same arrays, whatever the timing
          ASSERT_TRUE(align_on_device(r, r.topk_ids, r.expert_map, block_rows, &layout, &second))
              << what;
          EXPECT_EQ(second.sorted_rows, first.sorted_rows) << what;
        }
      }
    }
  }
}

TEST(MoeAlignGpu, OutOfRangeIdsAreSkippedAndCounted) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 1);
  // Experts 0..7 are local, 8..9 remote: a planted bad id must act like a remote pick.
  MoeRouting r = testing::random_routing(rng, 40, 3, 10, false);
  r.expert_map = {0, 1, 2, 3, 4, 5, 6, 7, -1, -1};
  std::vector<int32_t> planted = r.topk_ids;
  int bad = 0;
  for (size_t i = 0; i < planted.size(); i += 7, ++bad) {
    r.topk_ids[i] = 8;                           // the host sees a remote expert
    planted[i] = bad % 2 ? -3 - bad : 10 + bad;  // the device sees an id out of range
  }
  MoeAlignment host;
  ASSERT_TRUE(moe_align(r, 16, &host).ok());
  MoeAlignLayout layout;
  DeviceAlignment device;
  ASSERT_TRUE(align_on_device(r, planted, r.expert_map, 16, &layout, &device));
  expect_same(host, device, layout, bad, "planted ids");

  // A map entry out of range is skipped and counted the same way: the host sees expert 9 remote,
  // the device sees it mapped to local index 8 of 8.
  for (size_t i = 0; i < planted.size(); i += 7) r.topk_ids[i] = 9;
  std::vector<int32_t> bad_map = r.expert_map;
  bad_map[9] = 8;
  ASSERT_TRUE(moe_align(r, 16, &host).ok());
  ASSERT_TRUE(align_on_device(r, r.topk_ids, bad_map, 16, &layout, &device));
  // Every choice of expert 9 is invalid on the device: the planted ones and any drawn as 9.
  const int nines = static_cast<int>(std::count(r.topk_ids.begin(), r.topk_ids.end(), 9));
  ASSERT_GE(nines, bad);
  expect_same(host, device, layout, nines, "map entry out of range");
}

// Refusals happen on the host, before any launch: they run on machines without a GPU too.
TEST(MoeAlignGpu, RefusesMalformedCallsBeforeLaunching) {
  MoeAlignLayout layout;
  ASSERT_TRUE(MoeAlignLayout::make(4, 2, 8, 16, &layout).ok());
  alignas(16) static int32_t ids[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  alignas(16) static char storage[4096];
  DeviceMoeRouting routing;
  routing.tokens = 4;
  routing.top_k = 2;
  routing.experts = 8;
  routing.local_experts = 8;
  routing.topk_ids = ids;
  struct Case {
    const char* what;
    DeviceMoeRouting routing;
    void* buffer;
    size_t bytes;
    const char* message;
  };
  DeviceMoeRouting no_map = routing;
  no_map.local_experts = 4;
  DeviceMoeRouting zero_top_k = routing;
  zero_top_k.top_k = 0;
  DeviceMoeRouting null_ids = routing;
  null_ids.topk_ids = nullptr;
  DeviceMoeRouting more_tokens = routing;
  more_tokens.tokens = 400;
  const Case cases[] = {
      {"top_k 0", zero_top_k, storage, sizeof storage, "top_k 0"},
      {"local experts without a map", no_map, storage, sizeof storage, "without an expert_map"},
      {"null ids", null_ids, storage, sizeof storage, "topk_ids is null"},
      {"layout of another size", more_tokens, storage, sizeof storage, "made for another size"},
      {"short buffer", routing, storage, layout.bytes - 1, "the layout needs"},
      {"null buffer", routing, nullptr, sizeof storage, "the layout needs"},
      {"misaligned buffer", routing, storage + 4, sizeof storage - 4, "16-byte aligned"},
  };
  for (const Case& c : cases) {
    const Status s = moe_align_on_device(c.routing, layout, c.buffer, c.bytes, nullptr);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.what << ": " << s.to_string();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.what << ": " << s.message();
  }
  MoeAlignLayout too_many;
  EXPECT_EQ(MoeAlignLayout::make(1, 1, kMoeMaxLocalExperts + 1, 16, &too_many).code(),
            StatusCode::kUnsupported);
}

}  // namespace
}  // namespace sailfish
