// The human-readable output: one line per row as it finishes and the full table at the end, the
// part the lead reads on the device.
#pragma once

#include <string>
#include <vector>

#include "results.h"

namespace sailfish::bench {

std::string table_header();
std::string table_line(const RowResult& row);
void print_table(const RunInfo& run, const std::vector<RowResult>& rows);

}  // namespace sailfish::bench
