// What one run produces: the run's metadata and one row per (shape, M, requested tier). The JSON
// writer (json_output.h) and the table printer (table.h) read these; docs/BENCH.md documents every
// field under its JSON name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device_info.h"
#include "options.h"
#include "read_bandwidth.h"
#include "spot_check.h"

namespace sailfish::bench {

enum class RowStatus {
  kOk,           // measured and checked
  kCheckFailed,  // measured, but the correctness check failed (the run exits nonzero)
  kUnsupported,  // plan() declined this (shape, M, tier): not a failure
  kError,        // an error stopped this row (the run exits nonzero)
};
const char* row_status_name(RowStatus status);

struct RowResult {
  std::string shape;
  int64_t k = 0, n = 0, m = 0;
  std::string tier_requested;
  std::string tier;    // the tier the plan chose
  std::string reason;  // plan.reason
  std::string launch;  // the tier's launch configuration (tile width, splits, grid)
  // --tune: every candidate tune() timed, as (label, launch, us per call), and the chosen one.
  struct TuneCandidateResult {
    std::string label, launch;
    double us = 0.0;
    double sm_clock_mhz = 0.0;  // tune()'s lowest kept reading after its blocks; 0: not read
    int retimes = 0;            // blocks tune() timed again after the clock had fallen
    std::optional<double> bench_us;  // --tune-recheck: the same plan timed as the row is
    double bench_sm_clock_mhz = 0.0;  // and the SM clock right after that timing
  };
  std::vector<TuneCandidateResult> tune_candidates;
  int tune_chosen = -1;
  double tune_reference_clock_mhz = 0.0;  // tune()'s highest SM clock reading; 0: not read
  double tune_ms = 0.0;  // wall time of the tune() call
  std::optional<bool> deterministic;
  RowStatus status = RowStatus::kOk;
  std::string message;  // why a row is not ok

  // Sailfish.
  std::optional<double> us, tbps, tflops, pct_roofline;
  std::optional<double> replay_min_ms, replay_median_ms, replay_max_ms;
  int launches = 0;
  int weight_copies = 0;
  size_t workspace_bytes = 0;
  CheckResult check;
  bool checked = false;
  std::optional<int64_t> graph_nonfinite;  // NaN/Inf in the output after the timed replays
  std::optional<double> sm_clock_mhz;      // sampled right after the Sailfish timing

  // --eager: the same calls with no graph (eager_timer.h): GPU time per call, host time per
  // enqueue, and the same for the cuBLAS baseline and the row's floor form.
  std::optional<double> eager_us, eager_host_us;


  double bytes = 0.0, weight_bytes = 0.0, flops = 0.0;
  double roofline_us = 0.0;

  // Baselines of the same (shape, M), shared by every tier row of it.
  std::optional<double> cublas_us, ratio_vs_cublas;  // cublas_us / us: > 1 is faster than cuBLAS
  int cublas_launches = 0, cublas_copies = 0;
  std::optional<bool> cublas_check_passed;
  std::optional<double> floor_us, ratio_to_floor;  // us / floor_us: 1 is the floor
  // The floor's form: its loads (floor_loads_name) and whether it was launched with programmatic
  // dependent launch, which is how the row's plan launches (plan.programmatic_dependent_launch).
  std::string floor_form;
  // Every floor form of this (shape, M), as "<loads>/<pdl|plain>" -> us per call. "nc/plain" is
  // the floor of the results before v40 (docs/BENCH.md).
  std::vector<std::pair<std::string, double>> floor_forms;
  std::optional<bool> programmatic_dependent_launch;  // the row's plan
  std::optional<double> cublas_eager_us, cublas_eager_host_us;  // --eager
  std::optional<double> floor_eager_us, floor_eager_host_us;    // --eager, the row's floor form
};

struct RunInfo {
  std::string timestamp_utc;
  std::string git_revision;
  DeviceInfo device;
  ReadBandwidth read_bw;
  double roofline_read_tbps = 0.0;  // read_bw.tbps, or --roofline-read-bw when given
  BenchOptions options;
  int baseline_failures = 0;
  std::optional<std::string> fatal_error;
};

}  // namespace sailfish::bench
