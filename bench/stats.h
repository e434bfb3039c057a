// Order statistics of timing samples.
#pragma once

#include <algorithm>
#include <vector>

namespace sailfish::bench {

// The median (mean of the two middle values for an even count); 0 for no samples.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

}  // namespace sailfish::bench
