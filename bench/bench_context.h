// The state one run shares across shapes: options, device, stream and the long-lived helpers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "api/sm_clock.h"
#include "cublas_baseline.h"
#include "device_info.h"
#include "nonfinite_scan.h"
#include "options.h"
#include "sailfish/sailfish.h"
#include "stream_read.h"

namespace sailfish::bench {

struct BenchContext {
  const BenchOptions* options = nullptr;
  DeviceInfo device;
  cudaStream_t stream = nullptr;
  const Context* sailfish = nullptr;
  const StreamReader* reader = nullptr;
  CublasDense* cublas = nullptr;  // null with --no-cublas
  detail::SmClockProbe* clock = nullptr;
  NonfiniteScanner* scanner = nullptr;
  double read_tbps = 0.0;

  int64_t last_m = 0;          // M of the last measured row, for the power-cap pause
  int baseline_failures = 0;   // cuBLAS rows whose own check failed (a bench bug): exit nonzero
};

}  // namespace sailfish::bench
