// Reads the SM clock the GPU runs at right now: one thread counts SM cycles (clock64) over a
// stretch of wall time (%globaltimer). tune() reads it after each candidate's replays to see when
// the power limit has pulled the clock down (src/api/tune_clock.h), and the bench after each row
// (bench/table.cpp: the MHz column).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "sailfish/status.h"

namespace sailfish::detail {

class SmClockProbe {
 public:
  // Long against the globaltimer's update step (up to ~1 us on some parts), short against a
  // candidate's or a row's replays.
  static constexpr uint64_t kDefaultSpinNs = 200000;

  SmClockProbe() = default;
  ~SmClockProbe();
  SmClockProbe(const SmClockProbe&) = delete;
  SmClockProbe& operator=(const SmClockProbe&) = delete;

  // Allocates the probe's two result words on the current device.
  Status init();
  // Enqueues the probe on stream, waits for it, and writes the clock in MHz.
  Status measure(cudaStream_t stream, double* mhz, uint64_t spin_ns = kDefaultSpinNs);

 private:
  unsigned long long* result_ = nullptr;  // cycles, nanoseconds
};

}  // namespace sailfish::detail
