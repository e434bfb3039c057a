// Bad and unusual input to the planners and to the host checks before a launch: MoE layers at
// token counts whose row offsets outgrow the kernels' 32-bit arithmetic, routing sizes whose
// tokens * top_k wraps int64, run_moe's routing checks on the self-aligned path (which has no
// align launch to check them), and forced decode split depths past the grid's y dimension. Each
// case must come back as a Status that names the problem, or as a plan the kernels can run as it
// is; none may be handed a plan that reads the wrong rows or a launch CUDA refuses. Planned on the
// CPU model of the H200 (tests/model), as decode_plan_test.cpp and moe_plan_test.cpp do.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "decode/config.h"
#include "decode/launch.h"
#include "decode_gpu_model.h"
#include "matmul_nbits/convert.h"
#include "moe/plan_moe.h"
#include "moe_plan_helpers.h"
#include "prefill/config.h"
#include "prefill/launch.h"
#include "prefill/stream_k.h"
#include "sailfish/moe_gpu.h"
#include "sailfish/sailfish.h"

namespace sailfish {
namespace {

using test::DecodeGpuModel;

constexpr int64_t kTwo32 = int64_t(1) << 32;

void expect_error(const Status& st, StatusCode code, const std::string& needle) {
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), code) << st.to_string();
  EXPECT_NE(st.message().find(needle), std::string::npos)
      << "got \"" << st.message() << "\", expected it to mention \"" << needle << "\"";
}

// bits 4, no zero points, bf16.
MoeProblem moe_problem(int64_t tokens, int top_k, int experts, int local, int64_t n, int64_t k,
                       const MoeGemm& gemm) {
  return testing::moe_problem(tokens, top_k, experts, local, n, k, 4, ZeroPointKind::kNone,
                              DType::kBF16, gemm);
}
using testing::plan_on_model;

// The expert GEMM's activation rows are addressed with 32-bit element offsets (warp_split_kernel.cuh:
// act_row_offset = row * lda): A's rows under the fused gather, the gathered slab's rows
// ([gemm rows][k_pad]) otherwise. Every offset a plan lets the kernel form must fit.
std::string broken_row_offsets(const MoePlan& plan) {
  const MoeProblem& p = plan.problem;
  const PackedGeometry& g = p.geometry;
  if (plan.fused_gather) {
    const int64_t input_rows = p.gemm.input == MoeInput::kToken ? p.tokens : p.tokens * p.top_k;
    if ((input_rows - 1) * g.k >= kTwo32) return "A's row offsets pass 32 bits";
  } else if ((plan.gemm.problem.m - 1) * g.k_pad >= kTwo32) {
    return "the gathered slab's row offsets pass 32 bits";
  }
  return "";
}

// Mixtral 8x7B's down projection (k = 14336) over a long prefill of 150000 tokens: 300000 choice
// rows of 14336 columns are past 2^32 elements, so the plan takes the gather kernel, whose slab of
// 300224 rows x 14336 is past 2^32 too. The kernel's 32-bit row offsets would wrap and read other
// rows of the slab: a wrong Y, silently. Such a layer must be refused (fewer tokens a call).
TEST(PlannerInputLimits, MoeGatheredSlabPast32BitOffsetsIsRefused) {
  const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  ASSERT_FALSE(model.registers.empty());
  const MoeGemm down{MoeInput::kChoice, MoeOutput::kTokenSum, true};
  MoePlan plan;
  const MoeProblem mixtral = moe_problem(150000, 2, 8, 8, 4096, 14336, down);
  Status st = plan_on_model(model, mixtral, {}, &plan);
  if (st.ok()) {
    EXPECT_EQ(broken_row_offsets(plan), "") << plan.reason;
  } else {
    expect_error(st, StatusCode::kUnsupported, "2^32");
  }

  // The gate_up projection (A's token rows fit 32 bits) with the fusion turned off: 131072 tokens,
  // top 8 of 64, give a slab of 1050560 rows x 4096.
  const MoeGemm gate_up{MoeInput::kToken, MoeOutput::kChoice, false};
  const MoeProblem wide = moe_problem(131072, 8, 64, 64, 2048, 4096, gate_up);
  MoeOptions unfused;
  unfused.fuse = false;
  st = plan_on_model(model, wide, unfused, &plan);
  if (st.ok()) {
    EXPECT_EQ(broken_row_offsets(plan), "") << plan.reason;
  } else {
    expect_error(st, StatusCode::kUnsupported, "2^32");
  }
  // Fused, the same layer reads A in place (131072 x 4096 elements) and still plans.
  ASSERT_TRUE(plan_on_model(model, wide, {}, &plan).ok());
  EXPECT_TRUE(plan.fused_gather) << plan.reason;
  EXPECT_EQ(broken_row_offsets(plan), "") << plan.reason;

  // Inside the limit the unfused plan is made as before (130000 tokens: 1041984 rows of 4096).
  for (int64_t tokens : {int64_t(1000), int64_t(130000)}) {
    MoeProblem p = wide;
    p.tokens = tokens;
    st = plan_on_model(model, p, unfused, &plan);
    ASSERT_TRUE(st.ok()) << tokens << " tokens: " << st.to_string();
    EXPECT_FALSE(plan.fused_gather);
    EXPECT_EQ(broken_row_offsets(plan), "") << plan.reason;
  }
}

// MatMulNBitsOp with fp32 activations stages A and Y in the workspace; workspace_size() and run()
// sized them as m * K * 2 and m * N * 2 with m unbounded (the dense tier takes any m): for m =
// 2^52 and K = N = 4096 both products wrap to 0, so the workspace check passed with no staging
// and the conversions ran on wrapped counts. The sizes come from matmul_nbits::f32_staging_bytes,
// which refuses such m and gives the old sizes for every other.
TEST(PlannerInputLimits, MatMulNBitsStagingOfHugeMIsRefused) {
  size_t bytes = 1;
  EXPECT_FALSE(matmul_nbits::f32_staging_bytes(int64_t(1) << 52, 4096, 4096, &bytes));
  EXPECT_FALSE(matmul_nbits::f32_staging_bytes(std::numeric_limits<int64_t>::max(), 1, 1, &bytes));
  // Each size fits int64 (3 * 2^61 bytes), their sum does not.
  EXPECT_FALSE(matmul_nbits::f32_staging_bytes(int64_t(1) << 60, 3, 3, &bytes));
  EXPECT_FALSE(matmul_nbits::f32_staging_bytes(-1, 64, 64, &bytes));
  ASSERT_TRUE(matmul_nbits::f32_staging_bytes(0, 4096, 4096, &bytes));
  EXPECT_EQ(bytes, 0u);
  for (const int64_t m : {1, 7, 33, 4096, 1 << 20}) {
    const int64_t n = 11008, k = 4097;
    const auto align256 = [](int64_t v) { return size_t((v + 255) / 256 * 256); };
    ASSERT_TRUE(matmul_nbits::f32_staging_bytes(m, n, k, &bytes)) << m;
    EXPECT_EQ(bytes, align256(m * k * 2) + align256(m * n * 2)) << m;
  }
}

// tokens * top_k past int64: plan_moe formed the product (signed overflow, undefined behaviour)
// before anything bounded tokens. validate(MoeProblem), which says what plan_moe and run_moe
// refuse, must refuse the size itself, before any product.
TEST(PlannerInputLimits, MoeChoiceCountThatWrapsInt64IsRefusedByValidate) {
  const MoeGemm gemm;
  for (const int64_t tokens : {std::numeric_limits<int64_t>::max() / 2,
                               std::numeric_limits<int64_t>::max(), (int64_t(1) << 30) + 1}) {
    const MoeProblem p = moe_problem(tokens, 4, 8, 8, 256, 256, gemm);
    expect_error(moe::validate(p), StatusCode::kUnsupported, "2^30");
    // plan_moe refuses it too, on any device: queries that fail if they are ever asked.
    decode::DeviceQueries q;
    q.compute_major = 9;
    q.ctas_per_sm = [](const DecodePlan&, int*) { return internal_error("not asked"); };
    q.max_clusters = [](const DecodePlan&, int, int*) { return internal_error("not asked"); };
    MoePlan plan;
    expect_error(moe::plan_moe(p, q, 0, 132, {}, &plan), StatusCode::kUnsupported, "2^30");
  }
  // At the limit, 2^30 choice rows, validate accepts (plan_moe then refuses the grid).
  EXPECT_TRUE(moe::validate(moe_problem(int64_t(1) << 28, 4, 8, 8, 256, 256, gemm)).ok());
}

// run_moe on a self-aligned plan: no align launch runs, so the routing checks that
// moe_align_on_device makes (an expert map wherever local_experts < experts, 4-byte aligned int32
// ids and map) must be made before the expert GEMM, which reads the ids and the map itself. A null
// map under expert parallelism would read global ids as local ones (a silently wrong Y); a
// misaligned id array faults the kernel and with it the CUDA context.
struct HostBuffers {
  // Host memory standing in for device memory: run_moe must refuse before any launch.
  std::vector<std::unique_ptr<void, decltype(&std::free)>> owned;
  void* make(size_t bytes) {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
    owned.emplace_back(p, &std::free);
    return p;
  }
};

TEST(PlannerInputLimits, RunMoeChecksTheRoutingOfSelfAlignedPlans) {
  const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  ASSERT_FALSE(model.registers.empty());
  // One token, top 8 of 128 experts, 64 of them on this rank: the decode size that self-aligns.
  const MoeProblem p =
      moe_problem(1, 8, 128, 64, 1536, 2048, {MoeInput::kToken, MoeOutput::kChoice, true});
  MoePlan plan;
  ASSERT_TRUE(plan_on_model(model, p, {}, &plan).ok());
  ASSERT_TRUE(plan.self_align) << plan.reason;

  HostBuffers host;
  DeviceExperts experts;
  experts.geometry = p.geometry;
  experts.experts = p.local_experts;
  experts.scale_dtype = p.scale_dtype;
  experts.zero_kind = p.zero_kind;
  experts.codes = host.make(256);
  experts.scales = host.make(256);
  auto* ids = static_cast<int32_t*>(host.make(256));
  auto* map = static_cast<int32_t*>(host.make(512));
  MoeRunArgs args;
  args.routing.tokens = p.tokens;
  args.routing.top_k = p.top_k;
  args.routing.experts = p.experts;
  args.routing.local_experts = p.local_experts;
  args.routing.topk_ids = ids;
  args.routing.topk_weights = static_cast<const float*>(host.make(256));
  args.routing.expert_map = map;
  args.a = host.make(256);
  args.y = host.make(256);
  args.experts = &experts;
  void* workspace = host.make(plan.workspace_bytes);

  MoeRunArgs no_map = args;
  no_map.routing.expert_map = nullptr;
  expect_error(run_moe(plan, no_map, workspace, plan.workspace_bytes, nullptr),
               StatusCode::kInvalidArgument, "expert_map");
  MoeRunArgs odd_ids = args;
  odd_ids.routing.topk_ids = reinterpret_cast<const int32_t*>(reinterpret_cast<char*>(ids) + 2);
  expect_error(run_moe(plan, odd_ids, workspace, plan.workspace_bytes, nullptr),
               StatusCode::kInvalidArgument, "4-byte aligned");
  MoeRunArgs odd_map = args;
  odd_map.routing.expert_map = reinterpret_cast<const int32_t*>(reinterpret_cast<char*>(map) + 1);
  expect_error(run_moe(plan, odd_map, workspace, plan.workspace_bytes, nullptr),
               StatusCode::kInvalidArgument, "4-byte aligned");
  // The experts' arrays are read by 16-byte copies, and their stride comes from the geometry.
  for (int array = 0; array < 2; ++array) {
    DeviceExperts odd = experts;
    const void*& shifted = array == 0 ? odd.codes : odd.scales;
    shifted = static_cast<const char*>(shifted) + 8;
    MoeRunArgs odd_experts = args;
    odd_experts.experts = &odd;
    expect_error(run_moe(plan, odd_experts, workspace, plan.workspace_bytes, nullptr),
                 StatusCode::kInvalidArgument, "16-byte aligned");
  }
  DeviceExperts stale = experts;
  stale.geometry.k_blocks += 1;
  MoeRunArgs stale_experts = args;
  stale_experts.experts = &stale;
  expect_error(run_moe(plan, stale_experts, workspace, plan.workspace_bytes, nullptr),
               StatusCode::kInvalidArgument, "not the planned ones");
}

// download_expert (moe_gpu.h) refuses, before any copy, what it cannot read: no host weight, an
// expert outside the view, a view without codes or scales, zero points without their planes.
TEST(PlannerInputLimits, DownloadExpertRefusesIncompleteViews) {
  HostBuffers host;
  DeviceExperts experts;
  ASSERT_TRUE(PackedGeometry::make(256, 256, 4, 128, &experts.geometry).ok());
  experts.experts = 4;
  experts.codes = host.make(256);
  experts.scales = host.make(256);
  PackedWeight weight;
  expect_error(download_expert(experts, 0, nullptr), StatusCode::kInvalidArgument, "host is null");
  expect_error(download_expert(experts, 4, &weight), StatusCode::kInvalidArgument,
               "the view holds 4");
  expect_error(download_expert(experts, -1, &weight), StatusCode::kInvalidArgument, "expert -1");
  DeviceExperts no_codes = experts;
  no_codes.codes = nullptr;
  expect_error(download_expert(no_codes, 0, &weight), StatusCode::kInvalidArgument,
               "codes or scales are null");
  DeviceExperts no_planes = experts;
  no_planes.zero_kind = ZeroPointKind::kInteger;
  expect_error(download_expert(no_planes, 0, &weight), StatusCode::kInvalidArgument,
               "no zero_fold planes");
  DeviceExperts stray_planes = experts;
  stray_planes.zero_fold = host.make(256);
  expect_error(download_expert(stray_planes, 0, &weight), StatusCode::kInvalidArgument,
               "zero_fold is set");
  DeviceExperts stale = experts;
  stale.geometry.scale_rows += 1;
  expect_error(download_expert(stale, 0, &weight), StatusCode::kInvalidArgument,
               "geometry is inconsistent");
  DeviceExperts fp32_scales = experts;
  fp32_scales.scale_dtype = DType::kF32;
  expect_error(download_expert(fp32_scales, 0, &weight), StatusCode::kInvalidArgument,
               "scale dtype");
}

// validate(const DeviceWeight&), and run()'s neighbours that take a view without a plan
// (download, dequantize) or a problem (plan): each bad view is refused, naming what is wrong,
// before any CUDA call (so this runs without a device). Host memory stands in for the device's.
TEST(PlannerInputLimits, DeviceWeightViewsAreValidatedBeforeUse) {
  HostBuffers host;
  DeviceWeight good;
  ASSERT_TRUE(PackedGeometry::make(256, 512, 4, 128, &good.geometry).ok());
  good.codes = host.make(static_cast<size_t>(good.geometry.code_bytes()));
  good.scales = host.make(256);
  EXPECT_TRUE(validate(good).ok());
  DeviceWeight with_zeros = good;
  with_zeros.zero_kind = ZeroPointKind::kFloat;
  with_zeros.zero_fold = host.make(256);
  with_zeros.perm = static_cast<const int32_t*>(host.make(512 * 4));
  EXPECT_TRUE(validate(with_zeros).ok());

  struct Case {
    const char* what;
    std::function<void(DeviceWeight&)> change;
    const char* message;
  };
  const auto off = [](const void* p, int bytes) { return static_cast<const char*>(p) + bytes; };
  const Case cases[] = {
      {"codes null", [](DeviceWeight& w) { w.codes = nullptr; }, "codes or scales are null"},
      {"scales null", [](DeviceWeight& w) { w.scales = nullptr; }, "codes or scales are null"},
      {"codes 4 bytes off", [&](DeviceWeight& w) { w.codes = off(w.codes, 4); }, "16-byte"},
      {"scales 8 bytes off", [&](DeviceWeight& w) { w.scales = off(w.scales, 8); }, "16-byte"},
      {"zero_fold 2 bytes off",
       [&](DeviceWeight& w) {
         w.zero_kind = ZeroPointKind::kInteger;
         w.zero_fold = off(w.scales, 2);
       },
       "16-byte"},
      {"perm 2 bytes off",
       [&](DeviceWeight& w) { w.perm = reinterpret_cast<const int32_t*>(off(w.scales, 2)); },
       "4-byte aligned"},
      {"zero points without zero_fold", [](DeviceWeight& w) { w.zero_kind = ZeroPointKind::kFloat; },
       "zero_fold is null"},
      {"zero_fold beside zero kind none", [&](DeviceWeight& w) { w.zero_fold = w.scales; },
       "zero_fold is set"},
      {"zero kind out of enum", [](DeviceWeight& w) { w.zero_kind = static_cast<ZeroPointKind>(5); },
       "zero kind is 5"},
      {"fp32 scales", [](DeviceWeight& w) { w.scale_dtype = DType::kF32; }, "scale dtype"},
      {"k_pad 0", [](DeviceWeight& w) { w.geometry.k_pad = 0; }, "geometry is inconsistent"},
      {"n_blocks stale", [](DeviceWeight& w) { w.geometry.n_blocks += 1; },
       "geometry is inconsistent"},
      {"scale_rows stale", [](DeviceWeight& w) { w.geometry.scale_rows = 1; },
       "geometry is inconsistent"},
      {"bits 3", [](DeviceWeight& w) { w.geometry.bits = 3; }, "bits is 3"},
  };
  std::vector<uint8_t> out(static_cast<size_t>(256 * 512 * 2) + 64);
  void* out16 = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(out.data()) + 15) / 16 * 16);
  for (const Case& c : cases) {
    DeviceWeight w = good;
    c.change(w);
    const Status st = validate(w);
    EXPECT_FALSE(st.ok()) << c.what << ": accepted";
    EXPECT_NE(st.message().find(c.message), std::string::npos)
        << c.what << ": \"" << st.message() << "\" lacks \"" << c.message << "\"";
    // The entry points that read through a view refuse it the same way, with their own name.
    PackedWeight copy;
    const Status downloaded = download(w, &copy);
    EXPECT_FALSE(downloaded.ok()) << c.what;
    EXPECT_EQ(downloaded.message().rfind("download: ", 0), 0u) << downloaded.message();
    const Status dequantized = dequantize(w, out16, 512, nullptr);
    EXPECT_FALSE(dequantized.ok()) << c.what;
    EXPECT_EQ(dequantized.message().rfind("dequantize: ", 0), 0u) << dequantized.message();
  }

  // plan(): the problem's geometry whole, and the tier enum.
  Problem problem = Problem::for_weight(good, 1, DType::kBF16, false);
  Plan out_plan;
  Problem stale = problem;
  stale.geometry.k_blocks += 1;
  expect_error(plan(stale, 0, Options(), &out_plan), StatusCode::kInvalidArgument,
               "geometry is inconsistent");
  Options bad_tier;
  bad_tier.tier = static_cast<Tier>(9);
  expect_error(plan(problem, 0, bad_tier, &out_plan), StatusCode::kInvalidArgument,
               "Options::tier is 9");
}

// A forced decode split depth is capped at the k-blocks, and each split is a CTA along the grid's
// y dimension, which CUDA caps at 65535. A weight of 5,000,000 columns has 78125 k-blocks: forcing
// 70000 splits made a plan whose launch CUDA refuses (invalid configuration) at every run.
TEST(PlannerInputLimits, ForcedDecodeSplitsPastTheGridAreRefused) {
  const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  ASSERT_FALSE(model.registers.empty());
  for (const bool warp_split : {true, false}) {
    Plan plan;
    Problem& p = plan.problem;
    ASSERT_TRUE(PackedGeometry::make(64, 5000000, 4, 128, &p.geometry).ok());
    ASSERT_GT(p.geometry.k_blocks, 65535);
    p.m = 1;
    p.act_dtype = p.scale_dtype = DType::kBF16;
    plan.tier = Tier::kDecode;
    plan.sm_count = model.sm_count;
    decode::DecodeChoices choices;
    choices.warp_split = warp_split;
    choices.splits = 70000;
    const Status st = decode::plan_decode(choices, model.queries(plan.problem), &plan);
    if (st.ok()) {
      EXPECT_LE(plan.decode.splits, 65535) << "warp_split " << warp_split;
    } else {
      expect_error(st, StatusCode::kInvalidArgument, "65535");
    }
    // The largest depth the grid holds still plans, as forced.
    choices.splits = 65535;
    const Status at_limit = decode::plan_decode(choices, model.queries(plan.problem), &plan);
    ASSERT_TRUE(at_limit.ok()) << at_limit.to_string();
    EXPECT_EQ(plan.decode.splits, 65535);
  }
}

// The prefill kernel walks the split grid's work units with a 32-bit cursor (prefill/stream_k.h,
// WorkSchedule: cursor_ = cta, then cursor_ += grid while cursor_ < tiles * splits), so the last
// value it forms is the CTA's last unit plus the grid: up to tiles * splits - 1 + grid.
// plan_prefill bounded tiles * max(splits, 8) by 2^31 - 1 and nothing more: at 8 splits and
// 2^28 - 1 tiles (2^31 - 8 units) the grid's 264 CTAs took the cursor of most of its CTAs past
// 2^31 - 1, and a wrapped (negative) cursor passes the `cursor_ >= end_` test, so the kernel went
// on with negative units: negative strips, token tiles and split ranges, reads before the codes
// and partials written out of bounds. Such a plan needs a 16 TiB partials workspace (2^31 units of
// 16 x 128 floats), so no device could run it, but the plan was made; now it is refused.
int64_t prefill_max_cursor(const Plan& plan) {
  const PrefillPlan& f = plan.prefill;
  const int64_t tiles = int64_t(f.n_tiles) * f.m_tiles;
  return f.stream_k ? tiles * plan.problem.geometry.k_blocks  // cursor_ += run length, <= end_
                    : tiles * f.splits - 1 + f.grid;
}

TEST(PlannerInputLimits, PrefillWorkUnitCursorPast32BitsIsRefused) {
  const DecodeGpuModel model = DecodeGpuModel::h200(SAILFISH_DECODE_REGISTERS_JSON);
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  // 16-token tiles: 858993456 tokens make 53687091 token tiles; n = 640 makes 5 tiles of two
  // strips: 268435455 = 2^28 - 1 tiles, 8 splits (k = 512: 8 k-blocks) 2^31 - 8 work units.
  const auto plan_for = [&](int64_t m, int64_t n, int64_t splits, Plan* plan) {
    *plan = Plan();
    Problem& p = plan->problem;
    EXPECT_TRUE(PackedGeometry::make(n, 512, 4, 128, &p.geometry).ok());
    p.m = m;
    p.act_dtype = p.scale_dtype = DType::kBF16;
    plan->tier = Tier::kPrefill;
    plan->sm_count = model.sm_count;
    return prefill::plan_prefill(16, splits, std::nullopt, std::nullopt, plan);
  };
  Plan plan;
  Status st = plan_for(858993456, 640, 8, &plan);
  if (st.ok()) {
    EXPECT_LE(prefill_max_cursor(plan), kInt32Max)
        << plan.prefill.n_tiles << " x " << plan.prefill.m_tiles << " tiles, "
        << plan.prefill.splits << " splits, grid " << plan.prefill.grid;
  } else {
    expect_error(st, StatusCode::kUnsupported, "32-bit");
    EXPECT_NE(st.message().find("prefill_splits"), std::string::npos) << st.message();
  }
  // Up to where the cursor still fits the plan is made as before: 2^28 - 1 tiles at one split
  // (the default depth; any depth up to 8 is refused past 2^28 - 1 tiles, as before), and at
  // 8 splits the largest tile count whose cursor fits: 8 * tiles - 1 + 264 <= 2^31 - 1.
  st = plan_for(858993456, 640, 1, &plan);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_LE(prefill_max_cursor(plan), kInt32Max);
  const int64_t fits = (kInt32Max + 1 - int64_t(model.sm_count) * prefill::ctas_per_sm(16)) / 8;
  st = plan_for((fits / 5) * 16, 640, 8, &plan);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(plan.prefill.splits, 8);
  EXPECT_LE(prefill_max_cursor(plan), kInt32Max);
}

}  // namespace
}  // namespace sailfish
