// The machine-readable result file of --json; docs/BENCH.md "JSON schema" documents every field.
#pragma once

#include <string>
#include <vector>

#include "results.h"

namespace sailfish::bench {

// "sailfish-bench/1": bump when a field changes meaning or goes away (adding fields is fine).
constexpr const char* kJsonSchema = "sailfish-bench/1";

Status write_json(const std::string& path, const RunInfo& run, const std::vector<RowResult>& rows);

}  // namespace sailfish::bench
