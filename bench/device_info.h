// What the JSON records about the GPU, and the no-device test that must run before anything else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sailfish/status.h"

namespace sailfish::bench {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  int64_t l2_bytes = 0;
  int64_t global_mem_bytes = 0;
  int max_sm_clock_mhz = 0;   // the attribute's peak, not the clock under load (see api/sm_clock.h)
  int max_mem_clock_mhz = 0;
  int mem_bus_bits = 0;
  int driver_version = 0;     // e.g. 13000 for 13.0
  int runtime_version = 0;
  size_t cublaslt_version = 0;
};

// Number of usable CUDA devices; 0 when there is no device or no driver.
int cuda_device_count();
Status query_device(int ordinal, DeviceInfo* out);

}  // namespace sailfish::bench
