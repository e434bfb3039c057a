#include "table.h"

#include <cstdio>

namespace sailfish::bench {

namespace {

std::string fixed(const std::optional<double>& v, int width, int precision) {
  char text[64];
  if (!v) {
    std::snprintf(text, sizeof(text), "%*s", width, "-");
  } else {
    std::snprintf(text, sizeof(text), "%*.*f", width, precision, *v);
  }
  return text;
}

// Few decimals for large times, more for the few-microsecond decode rows.
std::string time_us(const std::optional<double>& v, int width) {
  return fixed(v, width, !v || *v < 100.0 ? 2 : 1);
}

std::string verdict(const RowResult& row) {
  switch (row.status) {
    case RowStatus::kOk: return "ok";
    case RowStatus::kCheckFailed: return "FAIL";
    case RowStatus::kUnsupported: return "unsup";
    case RowStatus::kError: return "ERROR";
  }
  return "?";
}

// --eager: the graph figure beside the same calls enqueued one by one, and what each enqueue
// costs the host. Where host_us exceeds a call's graph time, an eager caller is host-bound.
void print_eager_table(const std::vector<RowResult>& rows) {
  bool any = false;
  for (const RowResult& row : rows) any = any || row.eager_us || row.cublas_eager_us;
  if (!any) return;
  std::printf("\neager (no graph; us per call: GPU time of back-to-back calls, host = enqueue "
              "time):\n%-15s %5s %-14s %9s %9s %8s %10s %10s %10s %10s\n",
              "shape", "M", "tier", "graph_us", "eager_us", "host_us", "cublas_eag",
              "cublas_hst", "floor_eag", "floor_hst");
  for (const RowResult& row : rows) {
    std::printf("%-15s %5lld %-14s %s %s %s %s %s %s %s\n", row.shape.c_str(),
                static_cast<long long>(row.m), row.tier.empty() ? row.tier_requested.c_str()
                                                                : row.tier.c_str(),
                time_us(row.us, 9).c_str(), time_us(row.eager_us, 9).c_str(),
                fixed(row.eager_host_us, 8, 2).c_str(), time_us(row.cublas_eager_us, 10).c_str(),
                fixed(row.cublas_eager_host_us, 10, 2).c_str(),
                time_us(row.floor_eager_us, 10).c_str(),
                fixed(row.floor_eager_host_us, 10, 2).c_str());
  }
}

}  // namespace

std::string table_header() {
  char text[256];
  std::snprintf(text, sizeof(text), "%-15s %5s %-14s %9s %6s %7s %6s %9s %7s %9s %7s %5s %s",
                "shape", "M", "tier", "us", "TB/s", "TFLOP/s", "%roof", "cublas_us", "x_cublas",
                "floor_us", "x_floor", "MHz", "check");
  return text;
}

std::string table_line(const RowResult& row) {
  const std::string tier = row.tier.empty() || row.tier == row.tier_requested
                               ? row.tier_requested
                               : row.tier_requested + ">" + row.tier;
  const std::optional<double> mhz = row.sm_clock_mhz;
  char text[512];
  std::snprintf(text, sizeof(text), "%-15s %5lld %-14s %s %s %s %s %s %s %s %s %s %s",
                row.shape.c_str(), static_cast<long long>(row.m), tier.c_str(),
                time_us(row.us, 9).c_str(), fixed(row.tbps, 6, 2).c_str(),
                fixed(row.tflops, 7, 1).c_str(), fixed(row.pct_roofline, 6, 1).c_str(),
                time_us(row.cublas_us, 9).c_str(), fixed(row.ratio_vs_cublas, 8, 2).c_str(),
                time_us(row.floor_us, 9).c_str(), fixed(row.ratio_to_floor, 7, 2).c_str(),
                fixed(mhz, 5, 0).c_str(), verdict(row).c_str());
  return text;
}

void print_table(const RunInfo& run, const std::vector<RowResult>& rows) {
  const DeviceInfo& d = run.device;
  std::printf("\n== sailfish_bench: %s, %d SMs, L2 %.1f MB, read %.2f TB/s, roofline %.2f TB/s "
              "and %.0f TFLOP/s, int%d g%s %s%s%s ==\n",
              d.name.c_str(), d.sms, d.l2_bytes / 1e6, run.read_bw.tbps, run.roofline_read_tbps,
              run.options.peak_tflops,
              run.options.bits, group_label(run.options.group_size).c_str(),
              dtype_name(run.options.dtype),
              run.options.zero_points ? " zp" : "", run.options.act_order ? " act-order" : "");
  std::printf("x_cublas = cublas_us / us (>1: faster than cuBLAS); x_floor = us / floor_us "
              "(1: as fast as streaming the weight); MHz: SM clock right after the row\n");
  std::printf("%s\n", table_header().c_str());
  std::string last_shape;
  for (const RowResult& row : rows) {
    if (!last_shape.empty() && row.shape != last_shape) std::printf("\n");
    last_shape = row.shape;
    std::printf("%s\n", table_line(row).c_str());
  }
  print_eager_table(rows);
  bool any_note = false;
  for (const RowResult& row : rows) {
    if (row.status == RowStatus::kOk) continue;
    if (!any_note) std::printf("\nnot ok:\n");
    any_note = true;
    std::printf("  %s M=%lld %s [%s]: %s\n", row.shape.c_str(), static_cast<long long>(row.m),
                row.tier_requested.c_str(), row_status_name(row.status), row.message.c_str());
  }
  std::fflush(stdout);
}

}  // namespace sailfish::bench
