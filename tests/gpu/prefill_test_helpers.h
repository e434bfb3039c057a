// What the prefill-tier GPU tests share: the options that force the tier, and the skip for a GPU
// or build that cannot run it (where plan() must refuse it clearly, which the skip checks).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "gpu_test_helpers.h"
#include "sailfish/sailfish.h"

namespace sailfish::testing {

inline Options prefill_options(bool pdl = true) {
  Options o;
  o.tier = Tier::kPrefill;
  o.programmatic_dependent_launch = pdl;
  return o;
}

// True when this device and build run the prefill tier; otherwise checks that plan() refuses it
// with a clear kUnsupported and returns false (the caller then skips).
inline bool prefill_runs_here() {
  Problem problem;
  problem.m = 256;
  EXPECT_TRUE(PackedGeometry::make(128, 128, 4, 128, &problem.geometry).ok());
  Plan plan;
  const Status s = sailfish::plan(problem, -1, prefill_options(), &plan);
  if (s.ok()) return true;
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
  EXPECT_NE(s.message().find("prefill"), std::string::npos) << s.message();
  return false;
}

}  // namespace sailfish::testing

#define SF_SKIP_WITHOUT_PREFILL()                                                   \
  SF_SKIP_WITHOUT_GPU();                                                            \
  if (!::sailfish::testing::prefill_runs_here())                                    \
  GTEST_SKIP() << "prefill tier not available on this GPU/build"
