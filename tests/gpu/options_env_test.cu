// SAILFISH_* variables and Options of the prefill tier resolve as documented (docs/CONFIG.md):
// options win over the environment, the environment over the defaults, malformed or out-of-range
// values are errors that name the variable. Host only (no device needed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "api/environment.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::ScopedEnv;

TEST(PrefillOptions, DefaultsAreUnset) {
  api::ResolvedOptions r;
  ASSERT_TRUE(api::resolve_options(Options(), &r).ok());
  EXPECT_FALSE(r.prefill_min_m.has_value());
  EXPECT_FALSE(r.prefill_max_m.has_value());
  EXPECT_FALSE(r.prefill_splits.has_value());
  EXPECT_FALSE(r.prefill_stages.has_value());
  EXPECT_FALSE(r.prefill_tokens.has_value());
  EXPECT_FALSE(r.prefill_stream_k.has_value());
}

TEST(PrefillOptions, EnvironmentThenOptions) {
  ScopedEnv min_m("SAILFISH_PREFILL_MIN_M", "48");
  ScopedEnv max_m("SAILFISH_PREFILL_MAX_M", "4096");
  ScopedEnv splits("SAILFISH_PREFILL_SPLITS", "3");
  ScopedEnv stages("SAILFISH_PREFILL_STAGES", "5");
  ScopedEnv tokens("SAILFISH_PREFILL_TOKENS", "32");
  ScopedEnv stream_k("SAILFISH_PREFILL_STREAM_K", "1");
  api::ResolvedOptions r;
  ASSERT_TRUE(api::resolve_options(Options(), &r).ok());
  EXPECT_EQ(r.prefill_min_m.value_or(0), 48);
  EXPECT_EQ(r.prefill_max_m.value_or(0), 4096);
  EXPECT_EQ(r.prefill_splits.value_or(0), 3);
  EXPECT_EQ(r.prefill_stages.value_or(0), 5);
  EXPECT_EQ(r.prefill_tokens.value_or(0), 32);
  EXPECT_TRUE(r.prefill_stream_k.value_or(false));
  Options o;
  o.prefill_splits = 2;
  o.prefill_tokens = 64;
  o.prefill_stream_k = false;
  ASSERT_TRUE(api::resolve_options(o, &r).ok());
  EXPECT_EQ(r.prefill_splits.value_or(0), 2);
  EXPECT_EQ(r.prefill_tokens.value_or(0), 64);
  EXPECT_FALSE(r.prefill_stream_k.value_or(true));
}

TEST(PrefillOptions, BadValuesAreErrorsNamingTheVariable) {
  {
    ScopedEnv stages("SAILFISH_PREFILL_STAGES", "2");  // would deadlock: at least 3
    api::ResolvedOptions r;
    const Status s = api::resolve_options(Options(), &r);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("SAILFISH_PREFILL_STAGES"), std::string::npos) << s.message();
  }
  {
    ScopedEnv splits("SAILFISH_PREFILL_SPLITS", "many");
    api::ResolvedOptions r;
    const Status s = api::resolve_options(Options(), &r);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("SAILFISH_PREFILL_SPLITS"), std::string::npos) << s.message();
  }
  {
    ScopedEnv tokens("SAILFISH_PREFILL_TOKENS", "48");  // no 48-token kernel
    api::ResolvedOptions r;
    const Status s = api::resolve_options(Options(), &r);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("SAILFISH_PREFILL_TOKENS"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("16, 32, 64, 128 or 256"), std::string::npos) << s.message();
  }
  {
    Options o;
    o.prefill_tokens = 512;
    api::ResolvedOptions r;
    const Status s = api::resolve_options(o, &r);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("prefill_tokens is 512"), std::string::npos) << s.message();
  }
  {
    ScopedEnv stream_k("SAILFISH_PREFILL_STREAM_K", "2");
    api::ResolvedOptions r;
    const Status s = api::resolve_options(Options(), &r);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("SAILFISH_PREFILL_STREAM_K"), std::string::npos) << s.message();
  }
  {
    ScopedEnv min_m("SAILFISH_PREFILL_MIN_M", "0");
    api::ResolvedOptions r;
    const Status s = api::resolve_options(Options(), &r);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("SAILFISH_PREFILL_MIN_M"), std::string::npos) << s.message();
  }
  Options o;
  o.prefill_stages = 1;
  api::ResolvedOptions r;
  const Status s = api::resolve_options(o, &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("prefill_stages"), std::string::npos) << s.message();
}

TEST(DecodeOptions, WarpStagesAreThreeToSix) {
  {
    api::ResolvedOptions r;
    ASSERT_TRUE(api::resolve_options(Options(), &r).ok());
    EXPECT_FALSE(r.decode_warp_stages.has_value());
  }
  {
    ScopedEnv stages("SAILFISH_DECODE_WARP_STAGES", "3");
    api::ResolvedOptions r;
    ASSERT_TRUE(api::resolve_options(Options(), &r).ok());
    EXPECT_EQ(r.decode_warp_stages.value_or(0), 3);
    Options o;
    o.decode_warp_stages = 4;  // the option wins
    ASSERT_TRUE(api::resolve_options(o, &r).ok());
    EXPECT_EQ(r.decode_warp_stages.value_or(0), 4);
  }
  for (const char* bad : {"2", "7", "8", "four"}) {
    ScopedEnv stages("SAILFISH_DECODE_WARP_STAGES", bad);
    api::ResolvedOptions r;
    const Status s = api::resolve_options(Options(), &r);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("SAILFISH_DECODE_WARP_STAGES"), std::string::npos) << s.message();
  }
  Options o;
  o.decode_warp_stages = 16;
  api::ResolvedOptions r;
  const Status s = api::resolve_options(o, &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("decode_warp_stages is 16"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("3 or 4 stages a warp at 17-32 tokens a CTA, 4 or 5 at 9-16"),
            std::string::npos)
      << s.message();
  for (int deep : {5, 6}) {  // the deep instances at two and one token tiles
    o.decode_warp_stages = deep;
    EXPECT_TRUE(api::resolve_options(o, &r).ok()) << deep;
    EXPECT_EQ(r.decode_warp_stages.value_or(0), deep);
  }
}

// A decode on/off switch the plan decides while unset: unset by default; the variable set to
// `env_value` resolves to it; the option, set to the other value, wins over the variable; and a
// malformed value (`bad_value`) is an error that names the variable.
void expect_plan_switch(const char* variable, std::optional<bool> Options::*option,
                        std::optional<bool> api::ResolvedOptions::*resolved, bool env_value,
                        const char* bad_value) {
  {
    api::ResolvedOptions r;
    ASSERT_TRUE(api::resolve_options(Options(), &r).ok());
    EXPECT_FALSE((r.*resolved).has_value()) << variable;  // the plan decides
  }
  {
    ScopedEnv set(variable, env_value ? "1" : "0");
    api::ResolvedOptions r;
    ASSERT_TRUE(api::resolve_options(Options(), &r).ok());
    EXPECT_EQ(r.*resolved, std::optional<bool>(env_value)) << variable;
    Options o;
    o.*option = !env_value;  // the option wins
    ASSERT_TRUE(api::resolve_options(o, &r).ok());
    EXPECT_EQ(r.*resolved, std::optional<bool>(!env_value)) << variable;
  }
  ScopedEnv bad(variable, bad_value);
  api::ResolvedOptions r;
  const Status s = api::resolve_options(Options(), &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << variable;
  EXPECT_NE(s.message().find(variable), std::string::npos) << s.message();
}

TEST(DecodeOptions, ClusterPushSwitch) {
  expect_plan_switch("SAILFISH_DECODE_CLUSTER_PUSH", &Options::decode_cluster_push,
                     &api::ResolvedOptions::decode_cluster_push, false, "2");
}

TEST(DecodeOptions, SpreadSwitch) {
  expect_plan_switch("SAILFISH_DECODE_SPREAD", &Options::decode_spread,
                     &api::ResolvedOptions::decode_spread, true, "yes");
}

TEST(DecodeOptions, WideWarpsSwitch) {
  expect_plan_switch("SAILFISH_DECODE_WIDE_WARPS", &Options::decode_wide_warps,
                     &api::ResolvedOptions::decode_wide_warps, true, "8");
}

TEST(DecodeOptions, StreamKSwitchAndStrips) {
  {
    api::ResolvedOptions r;
    ASSERT_TRUE(api::resolve_options(Options(), &r).ok());
    EXPECT_FALSE(r.decode_stream_k.has_value());  // the plan decides
    EXPECT_FALSE(r.decode_stream_k_strips.has_value());
  }
  {
    ScopedEnv on("SAILFISH_DECODE_STREAM_K", "0");
    ScopedEnv strips("SAILFISH_DECODE_STREAM_K_STRIPS", "3");
    api::ResolvedOptions r;
    ASSERT_TRUE(api::resolve_options(Options(), &r).ok());
    EXPECT_EQ(r.decode_stream_k, std::optional<bool>(false));
    EXPECT_EQ(r.decode_stream_k_strips.value_or(0), 3);
    Options o;
    o.decode_stream_k = true;  // the option wins
    o.decode_stream_k_strips = 8;
    ASSERT_TRUE(api::resolve_options(o, &r).ok());
    EXPECT_EQ(r.decode_stream_k, std::optional<bool>(true));
    EXPECT_EQ(r.decode_stream_k_strips.value_or(0), 8);
  }
  for (const char* bad : {"0", "9", "three"}) {
    ScopedEnv strips("SAILFISH_DECODE_STREAM_K_STRIPS", bad);
    api::ResolvedOptions r;
    const Status s = api::resolve_options(Options(), &r);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("SAILFISH_DECODE_STREAM_K_STRIPS"), std::string::npos)
        << s.message();
  }
  {
    ScopedEnv on("SAILFISH_DECODE_STREAM_K", "maybe");
    api::ResolvedOptions r;
    const Status s = api::resolve_options(Options(), &r);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("SAILFISH_DECODE_STREAM_K"), std::string::npos) << s.message();
  }
  Options o;
  o.decode_stream_k_strips = 12;
  api::ResolvedOptions r;
  const Status s = api::resolve_options(o, &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("decode_stream_k_strips is 12"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("1 to 8 strips"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sailfish
