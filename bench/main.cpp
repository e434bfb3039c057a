// sailfish_bench: Sailfish against cuBLAS dense and a byte-streaming floor, row by row in one
// process, following DESIGN.md "How figures are taken". docs/BENCH.md is the manual.
//
// Exit status: 0 all rows ok (or declined by the planner); 1 a failed check, an error, or a bad
// device ordinal; 2 no CUDA device; CLI11's code for a bad command line.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <memory>

#include "bench_context.h"
#include "bench_git_revision.h"
#include "json_output.h"
#include "random_fill.h"
#include "read_bandwidth.h"
#include "shape_runner.h"
#include "table.h"

namespace sailfish::bench {

namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

std::string git_revision() {
  const char* env = std::getenv("SAILFISH_GIT_REVISION");
  return env != nullptr && env[0] != '\0' ? env : SAILFISH_BENCH_GIT_REVISION;
}

// Long-lived helpers, created once the device is selected.
struct Helpers {
  CudaStream stream;
  std::unique_ptr<Context> sailfish;
  StreamReader reader;
  detail::SmClockProbe clock;
  NonfiniteScanner scanner;
  std::unique_ptr<CublasDense> cublas;
};

Status create_helpers(const BenchOptions& o, Helpers* h) {
  SF_RETURN_IF_ERROR(h->stream.create());
  SF_RETURN_IF_ERROR(Context::create(o.device, &h->sailfish));
  SF_RETURN_IF_ERROR(h->reader.init());
  SF_RETURN_IF_ERROR(h->clock.init());
  SF_RETURN_IF_ERROR(h->scanner.init());
  if (o.cublas) SF_RETURN_IF_ERROR(CublasDense::create(o.dtype, &h->cublas));
  return Status();
}

// Measures everything; fills run (read bandwidth, fatal error) and rows.
void measure(const BenchOptions& o, RunInfo* run, std::vector<RowResult>* rows) {
  Helpers h;
  Status st = create_helpers(o, &h);
  if (st.ok()) {
    const size_t bytes = static_cast<size_t>(o.read_bw_gib * double(size_t(1) << 30));
    st = measure_read_bandwidth(h.reader, bytes, o.read_bw_reps, derive_seed(o.seed, 0xB4),
                                h.stream.get(), &run->read_bw);
  }
  if (!st.ok()) {
    run->fatal_error = "setup: " + st.to_string();
    return;
  }
  run->roofline_read_tbps =
      o.roofline_read_tbps > 0.0 ? o.roofline_read_tbps : run->read_bw.tbps;
  std::printf("streaming read: %.3f TB/s (median of %d sweeps over %.2f GiB, %s loads",
              run->read_bw.tbps, o.read_bw_reps,
              double(run->read_bw.bytes) / double(size_t(1) << 30), run->read_bw.form.c_str());
  for (const auto& [form, tbps] : run->read_bw.medians) std::printf("; %s %.3f", form.c_str(), tbps);
  std::printf("); roofline uses %.3f TB/s\n", run->roofline_read_tbps);
  std::printf("%s\n", table_header().c_str());
  std::fflush(stdout);

  BenchContext ctx;
  ctx.options = &o;
  ctx.device = run->device;
  ctx.stream = h.stream.get();
  ctx.sailfish = h.sailfish.get();
  ctx.reader = &h.reader;
  ctx.cublas = h.cublas.get();
  ctx.clock = &h.clock;
  ctx.scanner = &h.scanner;
  ctx.read_tbps = run->roofline_read_tbps;
  for (const Shape& shape : o.shapes) {
    st = run_shape(ctx, shape, rows);
    if (!st.ok()) {
      run->fatal_error = "CUDA context lost at shape " + shape.name + ": " + st.to_string();
      break;
    }
  }
  run->baseline_failures = ctx.baseline_failures;
}

int bench_main(int argc, char** argv) {
  BenchOptions o;
  const int parsed = parse_options(argc, argv, &o);
  if (parsed >= 0) return parsed;

  const int devices = cuda_device_count();
  if (devices == 0) {
    std::printf("no CUDA device: nothing to benchmark\n");
    return 2;
  }
  if (o.device >= devices) {
    std::fprintf(stderr, "sailfish_bench: --device %d, but only %d CUDA device(s)\n", o.device,
                 devices);
    return 1;
  }
  RunInfo run;
  run.options = o;
  run.timestamp_utc = utc_now();
  run.git_revision = git_revision();
  Status st = detail::cuda_status(cudaSetDevice(o.device), "cudaSetDevice");
  if (st.ok()) st = query_device(o.device, &run.device);
  if (!st.ok()) {
    std::fprintf(stderr, "sailfish_bench: %s\n", st.to_string().c_str());
    return 1;
  }
  const DeviceInfo& d = run.device;
  std::printf("sailfish_bench %s on %s (sm_%d%d, %d SMs, L2 %.1f MB, %d MHz max), %s\n",
              run.git_revision.c_str(), d.name.c_str(), d.cc_major, d.cc_minor, d.sms,
              d.l2_bytes / 1e6, d.max_sm_clock_mhz, o.command_line.c_str());

  std::vector<RowResult> rows;
  measure(o, &run, &rows);

  print_table(run, rows);
  int failures = run.baseline_failures + (run.fatal_error ? 1 : 0);
  for (const RowResult& r : rows) {
    failures += r.status == RowStatus::kCheckFailed || r.status == RowStatus::kError;
  }
  if (!o.json_path.empty()) {
    const Status written = write_json(o.json_path, run, rows);
    if (written.ok()) {
      std::printf("results: %s\n", o.json_path.c_str());
    } else {
      std::fprintf(stderr, "sailfish_bench: %s\n", written.message().c_str());
      ++failures;
    }
  }
  if (run.fatal_error) std::printf("FATAL: %s\n", run.fatal_error->c_str());
  if (failures > 0) {
    std::printf("FAILED: %d problem(s); see the messages above\n", failures);
    return 1;
  }
  std::printf("no failures in %zu rows\n", rows.size());
  return 0;
}

}  // namespace

}  // namespace sailfish::bench

int main(int argc, char** argv) {
  // Nothing below is meant to throw; this only turns std::bad_alloc and the like into a message.
  try {
    return sailfish::bench::bench_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sailfish_bench: unexpected exception: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "sailfish_bench: unexpected exception\n");
  }
  return 1;
}
