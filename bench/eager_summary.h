// The arithmetic of an eager timing (eager_timer.h), host-only so the CPU tests can check it.
#pragma once

#include <vector>

#include "stats.h"

namespace sailfish::bench {

struct EagerTiming {
  double us_per_call = 0.0;       // median over rounds of the round's event time / launches
  double host_us_per_call = 0.0;  // median over rounds of the enqueue loop's wall time / launches
  int launches = 0;
  int rounds = 0;
};

// The figures of rounds of `launches` calls each: host_us[r] is round r's enqueue loop in
// microseconds, gpu_ms[r] its event time in milliseconds, one value per round each. The two
// medians are taken apart: a round whose enqueue loop was slow is not always the round whose
// GPU time was.
inline EagerTiming summarize_eager(const std::vector<double>& host_us,
                                   const std::vector<double>& gpu_ms, int launches) {
  EagerTiming t;
  t.launches = launches;
  t.rounds = static_cast<int>(gpu_ms.size());
  if (launches < 1) return t;
  t.us_per_call = median(gpu_ms) * 1e3 / launches;
  t.host_us_per_call = median(host_us) / launches;
  return t;
}

}  // namespace sailfish::bench
