// The CPU planner model (tests/model/decode_gpu_model.h) against the device's own answers to the
// questions plan_decode asks (decode/launch.h, cuda_device_queries): CTAs an SM of each kernel
// instance the plans launch, at the plans' shared memory and at sizes that hold one to four CTAs
// an SM, and the clusters of two to eight CTAs resident at once. The model is of an H200; on
// another GPU the test skips. Each case prints the device's cluster counts beside the model's, so
// a failing run is also the data to refit the model with.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "decode/config.h"
#include "decode/launch.h"
#include "decode_gpu_model.h"
#include "gpu_test_helpers.h"

namespace sailfish {
namespace {

using test::DecodeGpuModel;

struct Case {
  const char* name;
  int64_t n, k, m;
  int bits;
  DType dtype;
};

// The instances a plan for `c` launches with four and eight warps and each stage count its token
// tiles have, at its own shared memory and at sizes that leave one to four CTAs an SM.
std::vector<DecodePlan> variants_of(const DecodePlan& planned) {
  std::vector<DecodePlan> out;
  std::vector<int> stages = {decode::kStages};
  if (decode::warp_split_has_deep(4, planned.token_tiles)) {
    stages.push_back(decode::warp_split_deep_stages(planned.token_tiles));
  }
  for (const int warps : {decode::kWarpSplitWarps, decode::kWarpSplitWideWarps}) {
    if (warps == decode::kWarpSplitWideWarps && planned.token_tiles != 1) continue;
    for (const int w : stages) {
      if (warps == decode::kWarpSplitWideWarps && w != decode::kStages) continue;
      for (const int shared : {planned.shared_bytes, 60000, 76000, 110000, 160000}) {
        DecodePlan v = planned;
        v.warps = warps;
        v.warp_stages = w;
        v.stream_k_strips = 0;
        v.spread_ctas = 0;
        v.shared_bytes = shared;
        out.push_back(v);
      }
    }
  }
  return out;
}

TEST(DecodeGpuModelOnDevice, QueriesMatchTheDevice) {
  SF_SKIP_WITHOUT_GPU();
  int device = 0, major = 0;
  SF_ASSERT_CUDA(cudaGetDevice(&device));
  SF_ASSERT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  ASSERT_FALSE(model.registers.empty());
  if (major != 9 || ::sailfish::testing::device_sm_count() != model.sm_count) {
    GTEST_SKIP() << "the model is of an H200 (sm_90, " << model.sm_count << " SMs)";
  }
  const Case cases[] = {
      {"int4 bf16 M = 1", 8192, 8192, 1, 4, DType::kBF16},
      {"int4 bf16 M = 9", 8192, 8192, 9, 4, DType::kBF16},
      {"int4 bf16 M = 24", 8192, 8192, 24, 4, DType::kBF16},
      {"int8 bf16 M = 1", 8192, 8192, 1, 8, DType::kBF16},
      {"int4 fp16 M = 1", 8192, 8192, 1, 4, DType::kF16},
  };
  int compared = 0;
  for (const Case& c : cases) {
    Problem problem;
    problem.m = c.m;
    ASSERT_TRUE(PackedGeometry::make(c.n, c.k, c.bits, 128, &problem.geometry).ok());
    problem.act_dtype = problem.scale_dtype = c.dtype;
    Options options;
    options.tier = Tier::kDecode;
    Plan plan;
    ASSERT_TRUE(sailfish::plan(problem, device, options, &plan).ok()) << c.name;
    ASSERT_TRUE(plan.decode.warp_split) << c.name;
    decode::DeviceQueries q;
    ASSERT_TRUE(decode::cuda_device_queries(plan.problem, device, &q).ok());
    EXPECT_EQ(q.smem_per_sm, model.smem_per_sm) << c.name;
    EXPECT_EQ(q.reserved_smem_per_block, model.reserved_smem_per_block) << c.name;
    for (const DecodePlan& v : variants_of(plan.decode)) {
      const std::string where = std::string(c.name) + ": " +
                                DecodeGpuModel::instance(plan.problem, v) + " at " +
                                std::to_string(v.shared_bytes) + " B";
      int device_ctas = 0, model_ctas = 0;
      ASSERT_TRUE(q.ctas_per_sm(v, &device_ctas).ok()) << where;
      ASSERT_TRUE(model.ctas_per_sm(plan.problem, v, &model_ctas).ok()) << where;
      EXPECT_EQ(model_ctas, device_ctas)
          << where << ": CTAs an SM (the registers in tests/sass/decode_registers.json are the "
          << "CPU build's; a device build by another nvcc can differ)";
      if (device_ctas < 1) continue;
      // The cluster count from the device's own CTAs an SM, so only the GPC rule is compared.
      std::string counts;
      for (int size = 2; size <= decode::kMaxClusterSplits; ++size) {
        int device_clusters = 0;
        ASSERT_TRUE(q.max_clusters(v, size, &device_clusters).ok()) << where;
        const int model_clusters = model.clusters_at(device_ctas, size);
        counts += " " + std::to_string(size) + ":" + std::to_string(device_clusters) + "/" +
                  std::to_string(model_clusters);
        EXPECT_EQ(model_clusters, device_clusters)
            << where << ", clusters of " << size << " at " << device_ctas << " CTAs an SM";
        ++compared;
      }
      std::printf("[ clusters ] %s, %d CTAs an SM (size:device/model):%s\n", where.c_str(),
                  device_ctas, counts.c_str());
    }
  }
  EXPECT_GT(compared, 100);
}

}  // namespace
}  // namespace sailfish
