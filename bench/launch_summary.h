// The plan's launch configuration in a few words (the bench rows' "launch" field, docs/BENCH.md),
// so sweeps can see what each row ran. Also the CPU planner model's tool and tests
// (tests/model), which print and compare plans in the same words.
#pragma once

#include <string>

#include "sailfish/sailfish.h"

namespace sailfish::bench {

std::string launch_summary(const Plan& p);

}  // namespace sailfish::bench
