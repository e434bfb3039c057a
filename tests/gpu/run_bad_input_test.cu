// Malformed device weight views and misaligned pointers through run(), dequantize() and
// download(): each is refused with a message that names what is wrong, before any launch or
// copy, and the CUDA context stays usable (a misaligned 16-byte copy inside a kernel is a sticky
// fault that would poison every later call). The same good call runs, and is right, before and
// after the refusals.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "sailfish/quantize.h"
#include "sailfish/reference.h"
#include "sailfish/sailfish.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::DeviceBuffer;

constexpr int64_t kN = 256, kK = 512;

void expect_refused(const Status& st, const std::string& needle, const char* what) {
  EXPECT_FALSE(st.ok()) << what << ": accepted";
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << what << ": " << st.to_string();
  EXPECT_NE(st.message().find(needle), std::string::npos)
      << what << ": got \"" << st.message() << "\", expected it to mention \"" << needle << "\"";
}

const void* shifted(const void* p, int bytes) { return static_cast<const char*>(p) + bytes; }

struct Fixture {
  QuantizedWeight weight;
  DeviceWeightStorage storage;
  std::unique_ptr<Context> context;
  DeviceBuffer a, y, workspace;
  std::vector<double> a_host;
  int64_t m = 0;
  Plan plan;
};

// A bf16 int4 g128 weight, fresh random A, and a plan for m rows on the given tier.
void make_fixture(int64_t m, Tier tier, Fixture* f) {
  std::mt19937_64 rng(testing::test_seed() + 911);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(kN * kK));
  for (float& v : w) v = normal(rng);
  QuantizeOptions q;
  ASSERT_TRUE(quantize_rtn(w.data(), kN, kK, q, &f->weight).ok());
  PackedWeight packed;
  ASSERT_TRUE(pack(f->weight, DType::kBF16, &packed).ok());
  ASSERT_TRUE(DeviceWeightStorage::upload(packed, &f->storage).ok());
  ASSERT_TRUE(Context::create(0, &f->context).ok());
  f->m = m;
  std::vector<uint16_t> a_bits(static_cast<size_t>(m * kK));
  f->a_host.resize(a_bits.size());
  for (size_t i = 0; i < a_bits.size(); ++i) {
    a_bits[i] = float_to_bits(normal(rng), DType::kBF16);
    f->a_host[i] = bits_to_float(a_bits[i], DType::kBF16);
  }
  ASSERT_TRUE(f->a.upload(a_bits));
  // One spare element past Y, so a pointer shifted by a byte stays inside the allocation.
  ASSERT_TRUE(f->y.allocate(static_cast<size_t>(m * kN + 1) * 2));
  Options options;
  options.tier = tier;
  ASSERT_TRUE(plan(Problem::for_weight(f->storage.view(), m, DType::kBF16, false), 0, options,
                   &f->plan)
                  .ok());
  ASSERT_EQ(f->plan.tier, tier);
  ASSERT_TRUE(f->workspace.allocate(f->plan.workspace_bytes + 256));
}

Status run_with(const Fixture& f, const DeviceWeight& weight, const void* a, void* y) {
  RunArgs args;
  args.a = a;
  args.y = y;
  args.weight = &weight;
  return run(f.plan, args, f.workspace.get(), f.plan.workspace_bytes, *f.context, nullptr);
}

// Runs the good call on Y poisoned with NaN and checks it with the suite's error rule
// (gemm_check.h): within twice a plain bf16 implementation's error of the float64 reference, plus
// a quarter ulp, and every element written.
void expect_good_run(const Fixture& f, const char* when) {
  SF_ASSERT_CUDA(cudaMemset(f.y.get(), 0xff, static_cast<size_t>(f.m * kN) * 2));
  const Status st = run_with(f, f.storage.view(), f.a.get(), f.y.get());
  ASSERT_TRUE(st.ok()) << when << ": " << st.to_string();
  SF_ASSERT_CUDA(cudaDeviceSynchronize());
  std::vector<uint16_t> y_bits = f.y.download<uint16_t>();
  y_bits.resize(static_cast<size_t>(f.m * kN));  // the spare element past Y
  std::vector<double> reference(y_bits.size());
  ASSERT_TRUE(reference_gemm(f.a_host.data(), f.m, f.weight, nullptr, reference.data()).ok());
  const std::vector<double> plain =
      testing::plain_implementation(f.a_host, f.m, f.weight, {}, DType::kBF16);
  const testing::ErrorSummary e =
      testing::compare_to_reference(y_bits, reference, plain, DType::kBF16);
  EXPECT_EQ(e.unwritten, 0) << when;
  EXPECT_LE(e.max_error, 2 * e.plain_error + e.atol)
      << when << ": max error " << e.max_error << ", plain " << e.plain_error;
}

class RunBadInput : public ::testing::TestWithParam<Tier> {};

TEST_P(RunBadInput, MalformedViewsAndPointersAreRefusedAndTheContextSurvives) {
  SF_SKIP_WITHOUT_GPU();
  const Tier tier = GetParam();
  Fixture f;
  make_fixture(tier == Tier::kPrefill ? 64 : 4, tier, &f);
  if (HasFatalFailure()) return;
  expect_good_run(f, "before");
  if (HasFatalFailure()) return;

  const DeviceWeight good = f.storage.view();
  struct Case {
    const char* what;
    DeviceWeight view;
    const char* message;
  };
  std::vector<Case> cases;
  DeviceWeight v = good;
  v.scales = shifted(good.scales, 8);
  cases.push_back({"scales 8 bytes off", v, "16-byte aligned"});
  v = good;
  v.codes = shifted(good.codes, 4);
  cases.push_back({"codes 4 bytes off", v, "16-byte aligned"});
  v = good;
  v.geometry.k_blocks += 1;
  cases.push_back({"stale k_blocks", v, "geometry is inconsistent"});
  v = good;
  v.geometry.scale_rows = 1;
  cases.push_back({"stale scale_rows", v, "geometry is inconsistent"});
  v = good;
  v.zero_fold = good.scales;
  cases.push_back({"zero_fold beside zero kind none", v, "zero_fold is set"});
  v = good;
  v.scale_dtype = DType::kF32;
  cases.push_back({"fp32 scale dtype", v, "scale dtype"});
  v = good;
  v.geometry = PackedGeometry();
  ASSERT_TRUE(PackedGeometry::make(kN, kK, 4, 64, &v.geometry).ok());
  cases.push_back({"another group size", v, "does not match the plan's"});
  for (const Case& c : cases) {
    expect_refused(run_with(f, c.view, f.a.get(), f.y.get()), c.message, c.what);
  }
  expect_refused(run_with(f, good, shifted(f.a.get(), 1), f.y.get()), "element size", "a + 1");
  expect_refused(run_with(f, good, f.a.get(), static_cast<char*>(f.y.get()) + 1), "element size",
                 "y + 1");

  // dequantize() and download() check the same view.
  DeviceBuffer out(static_cast<size_t>(good.geometry.n_pad * good.geometry.k_pad) * 2);
  DeviceWeight bad = good;
  bad.scales = shifted(good.scales, 8);
  expect_refused(dequantize(bad, out.get(), good.geometry.k_pad, nullptr), "16-byte aligned",
                 "dequantize, scales 8 bytes off");
  bad = good;
  bad.geometry.k_pad = 0;
  expect_refused(dequantize(bad, out.get(), 8, nullptr), "geometry is inconsistent",
                 "dequantize, k_pad 0");
  PackedWeight host;
  bad = good;
  bad.codes = shifted(good.codes, 2);
  expect_refused(download(bad, &host), "16-byte aligned", "download, codes 2 bytes off");

  SF_ASSERT_CUDA(cudaGetLastError());
  expect_good_run(f, "after the refusals");
}

INSTANTIATE_TEST_SUITE_P(Tiers, RunBadInput,
                         ::testing::Values(Tier::kDecode, Tier::kPrefill, Tier::kDense),
                         [](const ::testing::TestParamInfo<Tier>& info) {
                           return std::string(tier_name(info.param));
                         });

}  // namespace
}  // namespace sailfish
