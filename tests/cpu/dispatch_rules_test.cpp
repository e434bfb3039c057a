// The auto tier's decode/prefill crossover (src/api/dispatch_rules.h): the edges measured on the
// H200 (docs/perf/decode.md, Crossover v2, v12a and v33b). The GPU test PrefillDispatch checks
// the tier plan() picks on either side of them.
#include <gtest/gtest.h>

#include "api/dispatch_rules.h"

namespace sailfish::api {
namespace {

TEST(DispatchRules, Int4StaysOnDecodeThrough32) { EXPECT_EQ(default_prefill_min_m(4), 33); }

TEST(DispatchRules, Int8StaysOnDecodeThrough16) { EXPECT_EQ(default_prefill_min_m(8), 17); }

}  // namespace
}  // namespace sailfish::api
