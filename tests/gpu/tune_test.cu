// sailfish::tune (measured planning): the plan it returns computes the product, it is the fastest
// candidate by the rule it states (or the rule's plan), the options it reports reproduce it, and
// bad input gets an error.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "sailfish/quantize.h"
#include "sailfish/tune.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::GemmCase;

// Quick settings: the tests check what tune() chooses from its timings, not the timings.
TuneOptions quick_tune() {
  TuneOptions t;
  t.launches = 8;
  t.rounds = 3;
  return t;
}

// A GemmCase planner that tunes with these options, keeping the report where one is given.
decltype(GemmCase::planner) tuning_planner(const Options& o, const TuneOptions& t,
                                           TuneReport* report = nullptr) {
  return [o, t, report](const Problem& p, const DeviceWeight& dw, const Context& ctx, Plan* out) {
    return tune(p, -1, o, dw, ctx, nullptr, t, out, report);
  };
}

// The choice rule of tune.h: the fastest candidate where it beats the rule's plan by min_gain,
// else the rule's plan.
void expect_choice_follows_the_rule(const TuneReport& r, double min_gain,
                                    const std::string& where) {
  ASSERT_FALSE(r.candidates.empty()) << where;
  EXPECT_EQ(r.candidates[0].label, "rule") << where;
  size_t fastest = 0;
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    EXPECT_GT(r.candidates[i].us_per_call, 0.0) << where << " " << r.candidates[i].label;
    if (r.candidates[i].us_per_call < r.candidates[fastest].us_per_call) fastest = i;
  }
  const bool beats_rule = r.candidates[fastest].us_per_call <=
                          (1.0 - min_gain) * r.candidates[0].us_per_call;
  EXPECT_EQ(r.chosen, beats_rule ? static_cast<int>(fastest) : 0) << where;
}

// Tunes a decode-sized problem (q7.qkv of Qwen2.5-7B, 3584 x 4608, where the rule's depth was
// 1.14x the best forced one on the H200, v31), runs the tuned plan against the float64 reference,
// and checks the report: the rule's plan first, every decode depth distinct, the choice by the
// stated rule, and plan() with the chosen options giving the same launch.
TEST(Tune, TunedPlanComputesTheProductAndIsTheFastest) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 301);
  for (const int format : {0, 3}) {  // u4b8, u8b128
    for (const int64_t m : {int64_t(1), int64_t(16)}) {
      const std::string where =
          std::string(testing::kWeightFormats[format].name) + " m=" + std::to_string(m);
      const QuantizedWeight w = testing::random_weight(
          rng, testing::format_spec(testing::kWeightFormats[format], 4608, 3584, 128, false,
                                    DType::kBF16));
      GemmCase c = testing::gemm_case(w, DType::kBF16, m, true, Options());
      TuneReport report;
      const TuneOptions t = quick_tune();
      c.planner = tuning_planner(Options(), t, &report);
      const auto r = testing::run_and_check(c, rng());
      ASSERT_TRUE(r.ok) << where << ": " << r.message;
      expect_choice_follows_the_rule(report, t.min_gain, where);
      int l2_bytes = 0;
      ASSERT_EQ(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0), cudaSuccess);
      const double weight_bytes = 4608.0 * 3584 * w.bits / 8;
      if (2.0 * l2_bytes > weight_bytes) {
        EXPECT_GE(report.weight_copies, 2) << where << ": copies keep the timing cold";
      }
      int decode_depths = 0;
      for (size_t i = 0; i < report.candidates.size(); ++i) {
        const TuneCandidate& ci = report.candidates[i];
        if (ci.label.rfind("decode splits=", 0) == 0) ++decode_depths;
        for (size_t j = 0; j < i; ++j) {
          const Plan &a = ci.plan, &b = report.candidates[j].plan;
          EXPECT_FALSE(a.tier == b.tier && a.tier == Tier::kDecode &&
                       a.decode.splits == b.decode.splits &&
                       a.decode.epilogue == b.decode.epilogue &&
                       a.decode.warp_stages == b.decode.warp_stages &&
                       a.decode.cluster_push == b.decode.cluster_push)
              << where << ": " << ci.label << " repeats " << report.candidates[j].label;
        }
      }
      // 56 k-blocks take depths 1-8 at one 8-token tile; each is its own launch.
      EXPECT_GE(decode_depths, 4) << where;
      const TuneCandidate& chosen = report.candidates[static_cast<size_t>(report.chosen)];
      EXPECT_EQ(r.splits, chosen.plan.tier == Tier::kDecode ? chosen.plan.decode.splits
                                                            : chosen.plan.prefill.splits)
          << where;
      Plan again;
      Problem problem;
      problem.m = m;
      problem.has_bias = true;
      ASSERT_TRUE(PackedGeometry::make(w.n, w.k, w.bits, 128, &problem.geometry).ok());
      ASSERT_TRUE(plan(problem, -1, chosen.options, &again).ok()) << where;
      EXPECT_EQ(again.tier, chosen.plan.tier) << where;
      EXPECT_EQ(again.decode.splits, chosen.plan.decode.splits) << where;
      EXPECT_EQ(again.decode.epilogue, chosen.plan.decode.epilogue) << where;
      EXPECT_EQ(again.decode.warp_stages, chosen.plan.decode.warp_stages) << where;
      EXPECT_EQ(again.prefill.tokens, chosen.plan.prefill.tokens) << where;
    }
  }
}

// Both replay orders of tune_schedule.h time every candidate (an untimed one would have no median)
// and choose by the stated rule, over the same candidates; one round takes a single pass.
TEST(Tune, BothReplayOrdersTimeEveryCandidate) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 307);
  const QuantizedWeight w = testing::random_weight(
      rng, testing::format_spec(testing::kWeightFormats[0], 4608, 3584, 128, false,
                                DType::kBF16));
  size_t candidates = 0;
  for (const bool interleave : {false, true}) {
    for (const int rounds : {1, 2}) {
      const std::string where = std::string(interleave ? "interleaved" : "back to back") +
                                ", rounds=" + std::to_string(rounds);
      GemmCase c = testing::gemm_case(w, DType::kBF16, 1, false, Options());
      TuneReport report;
      TuneOptions t = quick_tune();
      t.interleave = interleave;
      t.rounds = rounds;
      c.planner = tuning_planner(Options(), t, &report);
      const auto r = testing::run_and_check(c, rng());
      ASSERT_TRUE(r.ok) << where << ": " << r.message;
      expect_choice_follows_the_rule(report, t.min_gain, where);
      if (candidates == 0) candidates = report.candidates.size();
      EXPECT_EQ(report.candidates.size(), candidates) << where;
      EXPECT_GT(candidates, 2u) << where;
    }
  }
}

// The clock guard (tune_clock.h) on the device: with it on, the tuning reads a plausible SM clock
// and every candidate a reading of its own, at or below the tuning's highest, with no more
// retimes than allowed; with a drop of 1e-6, about every reading counts as fallen, so blocks are
// timed again up to the limit, and the choice still follows the rule; with it off, no reading.
TEST(Tune, ClockGuardReadsTheClockAfterEveryCandidate) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 311);
  const QuantizedWeight w = testing::random_weight(
      rng, testing::format_spec(testing::kWeightFormats[0], 4608, 3584, 128, false,
                                DType::kBF16));
  struct Setting {
    double drop;
    int max_retimes;
    const char* what;
  };
  for (const Setting& g : {Setting{0.03, 2, "default drop"}, Setting{1e-6, 1, "drop 1e-6"},
                           Setting{0.0, 2, "guard off"}}) {
    GemmCase c = testing::gemm_case(w, DType::kBF16, 1, false, Options());
    TuneReport report;
    TuneOptions t = quick_tune();
    t.clock_drop = g.drop;
    t.max_retimes = g.max_retimes;
    t.max_cool_down_ms = 4;
    c.planner = tuning_planner(Options(), t, &report);
    const auto r = testing::run_and_check(c, rng());
    ASSERT_TRUE(r.ok) << g.what << ": " << r.message;
    expect_choice_follows_the_rule(report, t.min_gain, g.what);
    ASSERT_GT(report.candidates.size(), 2u) << g.what;
    int retimes = 0;
    for (const TuneCandidate& cand : report.candidates) {
      const std::string where = std::string(g.what) + ", " + cand.label;
      retimes += cand.retimes;
      if (g.drop == 0.0) {
        EXPECT_EQ(cand.sm_clock_mhz, 0.0) << where;
        EXPECT_EQ(cand.retimes, 0) << where;
        continue;
      }
      EXPECT_GT(cand.sm_clock_mhz, 100.0) << where;
      EXPECT_LE(cand.sm_clock_mhz, report.reference_clock_mhz) << where;
      // Two blocks a candidate (rounds = 3: two passes), each timed again at most max_retimes.
      EXPECT_LE(cand.retimes, 2 * g.max_retimes) << where;
      EXPECT_GE(cand.retimes, 0) << where;
    }
    if (g.drop == 0.0) {
      EXPECT_EQ(report.reference_clock_mhz, 0.0);
    } else {
      EXPECT_GT(report.reference_clock_mhz, 100.0) << g.what;
      EXPECT_LT(report.reference_clock_mhz, 5000.0) << g.what;
    }
    std::printf("[ clock    ] %s: reference %.1f MHz, %d blocks timed again over %zu candidates\n",
                g.what, report.reference_clock_mhz, retimes, report.candidates.size());
  }
}

// A tuned plan is an ordinary plan: in deterministic mode its repeats are bitwise equal.
TEST(Tune, DeterministicTunedPlanIsBitwiseStable) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 302);
  const QuantizedWeight w = testing::random_weight(
      rng, testing::format_spec(testing::kWeightFormats[1], 5120, 5120, 64, false,
                                DType::kF16));
  Options o;
  o.deterministic = true;
  GemmCase c = testing::gemm_case(w, DType::kF16, 4, false, o);
  c.repeats = 3;
  c.planner = tuning_planner(o, quick_tune());
  const auto r = testing::run_and_check(c, rng());
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_TRUE(r.bitwise_stable);
}

// Holds one uploaded weight for the tests below.
struct UploadedWeight {
  DeviceWeightStorage storage;
  std::unique_ptr<Context> context;
  bool make(int64_t n, int64_t k, int bits) {
    std::mt19937_64 rng(testing::test_seed() + 303);
    const QuantizedWeight w = testing::random_weight(
        rng, testing::format_spec(testing::kWeightFormats[bits == 4 ? 0 : 3], n, k, 128, false,
                                  DType::kBF16));
    PackedWeight packed;
    return pack(w, DType::kBF16, &packed).ok() &&
           DeviceWeightStorage::upload(packed, &storage).ok() && Context::create(-1, &context).ok();
  }
};

// Whether two decode plans launch the same kernel on the same grid.
bool same_decode_launch(const DecodePlan& a, const DecodePlan& b) {
  return a.splits == b.splits && a.epilogue == b.epilogue && a.warp_stages == b.warp_stages &&
         a.cluster_push == b.cluster_push && a.token_tiles == b.token_tiles &&
         a.stream_k_strips == b.stream_k_strips;
}

// Every stage count the warp-split kernel has for M is timed at every depth (v43: at one depth
// another count ran up to 1.09x faster than the rule's): each launch plan() gives for a forced
// (depth, count) is a candidate, once. int8 at M = 4 (one token tile: 4, 5 and 6 stages) and int4
// at M = 16 (two tiles: 4 and 5); where the options fix the count, only the depths vary.
TEST(Tune, TimesEveryStageCountAtEveryDepth) {
  SF_SKIP_WITHOUT_GPU();
  for (const auto& [bits, m] : {std::pair<int, int64_t>{8, 4}, std::pair<int, int64_t>{4, 16}}) {
    const std::string where = "int" + std::to_string(bits) + " m=" + std::to_string(m);
    UploadedWeight u;
    ASSERT_TRUE(u.make(8192, 4096, bits)) << where;
    const Problem problem = Problem::for_weight(u.storage.view(), m, DType::kBF16, false);
    for (const bool stages_fixed : {false, true}) {
      Options options;
      options.tier = Tier::kDecode;
      if (stages_fixed) options.decode_warp_stages = 4;
      Plan tuned;
      TuneReport report;
      ASSERT_TRUE(tune(problem, -1, options, u.storage.view(), *u.context, nullptr, quick_tune(),
                       &tuned, &report)
                      .ok())
          << where;
      expect_choice_follows_the_rule(report, quick_tune().min_gain, where);
      std::set<int> counts_seen;
      for (int s = 1; s <= 8; ++s) {
        for (const int k : {3, 4, 5, 6}) {
          Options forced = options;
          forced.decode_splits = s;
          if (!stages_fixed) forced.decode_warp_stages = k;
          Plan p;
          if (!plan(problem, -1, forced, &p).ok()) continue;
          int matches = 0;
          for (const TuneCandidate& c : report.candidates) {
            matches += c.plan.tier == Tier::kDecode && same_decode_launch(c.plan.decode, p.decode);
          }
          EXPECT_EQ(matches, 1) << where << " splits=" << s << " stages=" << k
                                << (stages_fixed ? " (count fixed at 4)" : "");
          counts_seen.insert(p.decode.warp_stages);
        }
      }
      for (const TuneCandidate& c : report.candidates) {
        if (stages_fixed) EXPECT_EQ(c.plan.decode.warp_stages, 4) << where << " " << c.label;
        if (stages_fixed) EXPECT_EQ(c.label.find("stages="), std::string::npos) << c.label;
      }
      // The counts the kernels are built with (decode/warp_split_instances.h): int8 at one tile 4,
      // 5 and 6; int4 at two tiles 4 and 5.
      const std::set<int> expected = stages_fixed ? std::set<int>{4}
                                     : bits == 8  ? std::set<int>{4, 5, 6}
                                                  : std::set<int>{4, 5};
      EXPECT_EQ(counts_seen, expected) << where;
    }
  }
}

// Where nothing is left to compare, tune() returns plan()'s own plan untimed: a forced decode tier
// at a forced depth, a forced dense tier, and M past the decode/prefill crossover. (A forced
// depth at the auto tier still has the prefill tier to compare with.)
TEST(Tune, OneCandidateIsReturnedUntimed) {
  SF_SKIP_WITHOUT_GPU();
  UploadedWeight u;
  ASSERT_TRUE(u.make(4096, 4096, 4));
  Options forced_depth;
  forced_depth.tier = Tier::kDecode;
  forced_depth.decode_splits = 3;
  Options dense;
  dense.tier = Tier::kDense;
  const struct {
    const char* what;
    Options options;
    int64_t m;
  } cases[] = {{"forced depth", forced_depth, 1}, {"dense tier", dense, 8}, {"m=256", {}, 256}};
  for (const auto& tc : cases) {
    const Problem problem = Problem::for_weight(u.storage.view(), tc.m, DType::kBF16, false);
    Plan tuned, planned;
    TuneReport report;
    ASSERT_TRUE(tune(problem, -1, tc.options, u.storage.view(), *u.context, nullptr, quick_tune(),
                     &tuned, &report)
                    .ok())
        << tc.what;
    ASSERT_TRUE(plan(problem, -1, tc.options, &planned).ok()) << tc.what;
    ASSERT_EQ(report.candidates.size(), 1u) << tc.what;
    EXPECT_EQ(report.chosen, 0) << tc.what;
    EXPECT_EQ(report.weight_copies, 0) << tc.what << ": nothing was timed";
    EXPECT_EQ(tuned.tier, planned.tier) << tc.what;
    EXPECT_EQ(tuned.decode.splits, planned.decode.splits) << tc.what;
    EXPECT_EQ(tuned.reason, planned.reason) << tc.what;
  }
}

// At auto and M <= 64 on a device with the prefill tier, the prefill tier's plan is a candidate
// beside the decode depths.
TEST(Tune, AutoTierComparesDecodeWithPrefill) {
  SF_SKIP_WITHOUT_GPU();
  UploadedWeight u;
  ASSERT_TRUE(u.make(8192, 4096, 4));
  const Problem problem = Problem::for_weight(u.storage.view(), 32, DType::kBF16, false);
  Plan tuned;
  TuneReport report;
  ASSERT_TRUE(tune(problem, -1, Options(), u.storage.view(), *u.context, nullptr, quick_tune(),
                   &tuned, &report)
                  .ok());
  expect_choice_follows_the_rule(report, quick_tune().min_gain, "m=32");
  bool decode = false, prefill = false;
  for (const TuneCandidate& c : report.candidates) {
    decode |= c.plan.tier == Tier::kDecode;
    prefill |= c.plan.tier == Tier::kPrefill;
  }
  EXPECT_TRUE(decode);
  Plan probe;
  Options prefill_only;
  prefill_only.tier = Tier::kPrefill;
  if (plan(problem, -1, prefill_only, &probe).ok()) EXPECT_TRUE(prefill);
  EXPECT_EQ(tuned.reason.rfind("tuned: ", 0), 0u) << tuned.reason;
}

TEST(Tune, RejectsBadInput) {
  SF_SKIP_WITHOUT_GPU();
  UploadedWeight u;
  ASSERT_TRUE(u.make(1024, 1024, 4));
  const DeviceWeight& w = u.storage.view();
  const Problem problem = Problem::for_weight(w, 1, DType::kBF16, false);
  Plan out;
  auto expect_invalid = [&](const Status& st, const char* needle) {
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.to_string();
  };
  expect_invalid(tune(problem, -1, Options(), w, *u.context, nullptr, quick_tune(), nullptr),
                 "out is null");
  TuneOptions bad = quick_tune();
  bad.rounds = 0;
  expect_invalid(tune(problem, -1, Options(), w, *u.context, nullptr, bad, &out), "rounds");
  bad = quick_tune();
  bad.min_gain = 0.7;
  expect_invalid(tune(problem, -1, Options(), w, *u.context, nullptr, bad, &out), "min_gain");
  bad = quick_tune();
  bad.cold_l2_factor = -1.0;
  expect_invalid(tune(problem, -1, Options(), w, *u.context, nullptr, bad, &out), "cold_l2");
  bad = quick_tune();
  bad.clock_drop = 0.5;
  expect_invalid(tune(problem, -1, Options(), w, *u.context, nullptr, bad, &out), "clock_drop");
  bad = quick_tune();
  bad.max_retimes = -1;
  expect_invalid(tune(problem, -1, Options(), w, *u.context, nullptr, bad, &out), "max_retimes");
  bad = quick_tune();
  bad.max_cool_down_ms = 20000;
  expect_invalid(tune(problem, -1, Options(), w, *u.context, nullptr, bad, &out),
                 "max_cool_down_ms");
  Problem other = problem;
  ASSERT_TRUE(PackedGeometry::make(2048, 1024, 4, 128, &other.geometry).ok());
  expect_invalid(tune(other, -1, Options(), w, *u.context, nullptr, quick_tune(), &out),
                 "does not match the problem");
  DeviceWeight no_codes = w;
  no_codes.codes = nullptr;
  expect_invalid(tune(problem, -1, Options(), no_codes, *u.context, nullptr, quick_tune(), &out),
                 "codes or scales are null");
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  expect_invalid(tune(problem, count, Options(), w, *u.context, nullptr, quick_tune(), &out),
                 "context is for device");
}

}  // namespace
}  // namespace sailfish
