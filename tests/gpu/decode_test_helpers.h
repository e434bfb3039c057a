// What the decode-tier GPU tests share: the options that force the tier, and the epilogue codes
// a plan reports.
#pragma once

#include "sailfish/sailfish.h"

namespace sailfish::testing {

inline Options decode_options(bool deterministic = false, bool atomic = false) {
  Options o;
  o.tier = Tier::kDecode;
  o.deterministic = deterministic;
  o.atomic_epilogue = atomic;
  return o;
}

constexpr int kEpiloguePartials = 2, kEpilogueCluster = 3;  // src/decode/cluster_epilogue.h: Epilogue

}  // namespace sailfish::testing
