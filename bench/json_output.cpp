#include "json_output.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace sailfish::bench {

namespace {

using Json = nlohmann::ordered_json;  // keeps the documented field order in the file

template <typename T>
Json nullable(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json device_json(const DeviceInfo& d) {
  Json j;
  j["name"] = d.name;
  j["ordinal"] = d.ordinal;
  j["compute_capability"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
  j["sms"] = d.sms;
  j["l2_bytes"] = d.l2_bytes;
  j["global_mem_bytes"] = d.global_mem_bytes;
  j["max_sm_clock_mhz"] = d.max_sm_clock_mhz;
  j["max_mem_clock_mhz"] = d.max_mem_clock_mhz;
  j["mem_bus_bits"] = d.mem_bus_bits;
  j["driver_version"] = d.driver_version;
  j["runtime_version"] = d.runtime_version;
  j["cublaslt_version"] = d.cublaslt_version;
  return j;
}

Json options_json(const BenchOptions& o) {
  Json j;
  Json shapes = Json::array();
  for (const Shape& s : o.shapes) shapes.push_back({{"name", s.name}, {"K", s.k}, {"N", s.n}});
  j["shapes"] = shapes;
  j["M"] = o.m_values;
  j["bits"] = o.bits;
  j["group_size"] = o.group_size;
  j["dtype"] = dtype_name(o.dtype);
  j["zero_points"] = o.zero_points;
  j["act_order"] = o.act_order;
  j["bias"] = o.bias;
  Json tiers = Json::array();
  for (Tier t : o.tiers) tiers.push_back(tier_label(t));
  j["tiers"] = tiers;
  j["deterministic"] = nullable(o.deterministic);
  j["tune"] = o.tune;
  if (o.tune) {
    const TuneOptions& t = o.tune_options;
    j["tune_options"] = {{"cold_l2_factor", t.cold_l2_factor}, {"launches", t.launches},
                         {"rounds", t.rounds}, {"interleave", t.interleave},
                         {"clock_drop", t.clock_drop}, {"max_retimes", t.max_retimes},
                         {"recheck", o.tune_recheck}};
  }
  j["graph_launches"] = o.graph_launches;
  j["replays"] = o.replays;
  j["warmup_replays"] = o.warmup_replays;
  j["quick"] = o.quick;
  j["eager"] = o.eager;
  j["cooldown_ms"] = o.cooldown_ms;
  j["cooldown_after_m"] = o.cooldown_after_m;
  j["check_samples"] = o.check_samples;
  j["cublas"] = o.cublas;
  j["seed"] = o.seed;
  j["cold_factor"] = o.cold_factor;
  j["peak_TFLOPs"] = o.peak_tflops;
  j["roofline_read_bw_TBps"] =
      o.roofline_read_tbps > 0.0 ? Json(o.roofline_read_tbps) : Json(nullptr);
  return j;
}

Json row_json(const RowResult& r) {
  Json j;
  j["shape"] = r.shape;
  j["K"] = r.k;
  j["N"] = r.n;
  j["M"] = r.m;
  j["tier_requested"] = r.tier_requested;
  j["tier"] = r.tier.empty() ? Json(nullptr) : Json(r.tier);
  j["reason"] = r.reason;
  j["launch"] = r.launch;
  if (r.tune_chosen >= 0) {
    Json candidates = Json::array();
    for (const auto& c : r.tune_candidates) {
      Json candidate = {{"label", c.label},
                        {"launch", c.launch},
                        {"us", c.us},
                        {"sm_clock_mhz", c.sm_clock_mhz},
                        {"retimes", c.retimes}};
      if (c.bench_us) {
        candidate["bench_us"] = *c.bench_us;
        candidate["bench_sm_clock_mhz"] = c.bench_sm_clock_mhz;
      }
      candidates.push_back(candidate);
    }
    j["tune"] = {{"chosen", r.tune_chosen},
                 {"ms", r.tune_ms},
                 {"reference_clock_mhz", r.tune_reference_clock_mhz},
                 {"candidates", candidates}};
  }
  j["deterministic"] = nullable(r.deterministic);
  j["status"] = row_status_name(r.status);
  j["message"] = r.message;
  j["us"] = nullable(r.us);
  j["TBps"] = nullable(r.tbps);
  j["TFLOPs"] = nullable(r.tflops);
  j["pct_roofline"] = nullable(r.pct_roofline);
  j["roofline_us"] = r.roofline_us;
  j["bytes"] = r.bytes;
  j["weight_bytes"] = r.weight_bytes;
  j["flops"] = r.flops;
  j["cublas_us"] = nullable(r.cublas_us);
  j["ratio_vs_cublas"] = nullable(r.ratio_vs_cublas);
  j["floor_us"] = nullable(r.floor_us);
  j["ratio_to_floor"] = nullable(r.ratio_to_floor);
  j["floor_form"] = r.floor_form;
  Json forms = Json::object();
  for (const auto& [form, us] : r.floor_forms) forms[form] = us;
  j["floor_forms_us"] = forms;
  j["pdl"] = nullable(r.programmatic_dependent_launch);
  if (r.eager_us || r.cublas_eager_us || r.floor_eager_us) {  // --eager
    j["eager"] = {{"us", nullable(r.eager_us)},
                  {"host_us", nullable(r.eager_host_us)},
                  {"cublas_us", nullable(r.cublas_eager_us)},
                  {"cublas_host_us", nullable(r.cublas_eager_host_us)},
                  {"floor_us", nullable(r.floor_eager_us)},
                  {"floor_host_us", nullable(r.floor_eager_host_us)}};
  }
  j["launches"] = r.launches;
  j["replay_ms"] = {{"min", nullable(r.replay_min_ms)},
                    {"median", nullable(r.replay_median_ms)},
                    {"max", nullable(r.replay_max_ms)}};
  j["weight_copies"] = r.weight_copies;
  j["cublas_launches"] = r.cublas_launches;
  j["cublas_copies"] = r.cublas_copies;
  j["cublas_check_passed"] = nullable(r.cublas_check_passed);
  j["workspace_bytes"] = r.workspace_bytes;
  j["sm_clock_mhz"] = nullable(r.sm_clock_mhz);
  if (r.checked) {
    j["check"] = {{"passed", r.check.passed},
                  {"samples", r.check.samples},
                  {"failures", r.check.failures},
                  {"max_err_over_tol", r.check.max_err_over_tol},
                  {"nonfinite", r.check.nonfinite},
                  {"graph_nonfinite", nullable(r.graph_nonfinite)},
                  {"detail", r.check.detail}};
  } else {
    j["check"] = nullptr;
  }
  return j;
}

}  // namespace

Status write_json(const std::string& path, const RunInfo& run, const std::vector<RowResult>& rows) {
  Json root;
  root["schema"] = kJsonSchema;
  Json meta;
  meta["timestamp_utc"] = run.timestamp_utc;
  meta["git_revision"] = run.git_revision;
  meta["command_line"] = run.options.command_line;
  meta["device"] = device_json(run.device);
  meta["read_bw_TBps"] = run.read_bw.tbps;
  meta["read_bw_bytes"] = run.read_bw.bytes;
  meta["read_bw_samples_TBps"] = run.read_bw.samples;
  meta["read_bw_form"] = run.read_bw.form;
  Json read_forms = Json::object();
  for (const auto& [form, tbps] : run.read_bw.medians) read_forms[form] = tbps;
  meta["read_bw_forms_TBps"] = read_forms;
  meta["roofline_read_bw_TBps"] = run.roofline_read_tbps;
  meta["peak_TFLOPs"] = run.options.peak_tflops;
  meta["options"] = options_json(run.options);
  root["run"] = meta;

  Json out_rows = Json::array();
  int ok = 0, check_failed = 0, errors = 0, unsupported = 0;
  for (const RowResult& r : rows) {
    out_rows.push_back(row_json(r));
    ok += r.status == RowStatus::kOk;
    check_failed += r.status == RowStatus::kCheckFailed;
    errors += r.status == RowStatus::kError;
    unsupported += r.status == RowStatus::kUnsupported;
  }
  root["rows"] = out_rows;
  root["summary"] = {{"rows", rows.size()},
                     {"ok", ok},
                     {"check_failed", check_failed},
                     {"error", errors},
                     {"unsupported", unsupported},
                     {"baseline_failures", run.baseline_failures},
                     {"fatal_error", nullable(run.fatal_error)}};

  std::ofstream file(path);
  if (!file) return invalid_argument("cannot open '", path, "' for writing");
  // replace: a stray byte in a message must not turn into an exception.
  file << root.dump(1, ' ', false, Json::error_handler_t::replace) << '\n';
  file.close();
  if (!file) return invalid_argument("writing '", path, "' failed");
  return Status();
}

}  // namespace sailfish::bench
