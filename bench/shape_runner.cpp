#include "shape_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "api/tune_clock.h"
#include "eager_timer.h"
#include "graph_timer.h"
#include "launch_summary.h"
#include "random_fill.h"
#include "roofline.h"
#include "rotation.h"
#include "sailfish/tune.h"
#include "table.h"
#include "weight_set.h"

namespace sailfish::bench {

namespace {

// More copies than this would only mean a tiny layer; the graph would grow without a benefit.
constexpr int kMaxCopies = 4096;
// Free memory left alone when sizing the cuBLAS copies: the dense tier's dequantization scratch
// (up to one bf16 weight) plus a margin for cuBLAS and the runtime.
constexpr size_t kMemoryMargin = size_t(1) << 30;

// After an error: is the context still usable? A sticky error (a kernel fault) comes back from
// every later call, so a device-wide sync tells it apart from an error of one call.
bool context_healthy() {
  const cudaError_t synced = cudaDeviceSynchronize();
  cudaGetLastError();  // drop a one-call error so that the next check does not see it again
  return synced == cudaSuccess;
}

// Everything a shape allocates; sized for its largest M and freed when the shape is done.
struct ShapeBuffers {
  PackedGeometry geometry;
  PackedWeightSet weights;
  DenseWeightSet dense;
  bool has_dense = false;
  DeviceBuffer a, y, bias, workspace;
  PackedWeight host_weight;  // copy 0, for the reference check
  bool has_host_weight = false;
  std::vector<uint16_t> host_bias;
  std::string note;  // a caveat that applies to every row of the shape (fewer cold copies...)
};

Status setup_shape(BenchContext& ctx, const Shape& shape, ShapeBuffers* b) {
  const BenchOptions& o = *ctx.options;
  const cudaStream_t stream = ctx.stream;
  const int64_t m_max = o.m_values.back();
  const uint64_t seed = derive_seed(o.seed, static_cast<uint64_t>(shape.k),
                                    static_cast<uint64_t>(shape.n));
  SF_RETURN_IF_ERROR(PackedGeometry::make(shape.n, shape.k, o.bits, o.group_size, &b->geometry));
  const PackedGeometry& g = b->geometry;

  SF_RETURN_IF_ERROR(b->a.allocate(static_cast<size_t>(m_max * shape.k) * 2));
  SF_RETURN_IF_ERROR(b->y.allocate(static_cast<size_t>(m_max * shape.n) * 2));
  SF_RETURN_IF_ERROR(fill_random_values(b->a.get(), m_max * shape.k, o.dtype, 1.0f,
                                        derive_seed(seed, 0xAC71), stream));
  if (o.bias) {
    SF_RETURN_IF_ERROR(b->bias.allocate(static_cast<size_t>(shape.n) * 2));
    SF_RETURN_IF_ERROR(fill_random_values(b->bias.get(), shape.n, o.dtype, 0.5f,
                                          derive_seed(seed, 0xB1A5), stream));
    b->host_bias.resize(static_cast<size_t>(shape.n));
    SF_CUDA_CHECK(cudaMemcpyAsync(b->host_bias.data(), b->bias.get(), b->host_bias.size() * 2,
                                  cudaMemcpyDeviceToHost, stream));
  }

  PackedWeightSet::Spec spec;
  spec.geometry = g;
  spec.dtype = o.dtype;
  spec.zero_kind = o.zero_points ? ZeroPointKind::kInteger : ZeroPointKind::kNone;
  spec.act_order = o.act_order;
  const RowCost cost = row_cost(g, o.zero_points, o.act_order, o.bias, 1);
  const int copies = cold_copies(static_cast<size_t>(cost.weight_bytes), ctx.device.l2_bytes,
                                 o.cold_factor, kMaxCopies);
  SF_RETURN_IF_ERROR(PackedWeightSet::create(spec, copies, seed, stream, &b->weights));
  if (o.check_samples > 0) {
    SF_RETURN_IF_ERROR(b->weights.download_first(&b->host_weight));
    b->has_host_weight = true;
  }

  if (ctx.cublas != nullptr) {
    const size_t dense_bytes = static_cast<size_t>(shape.n * shape.k) * 2;
    size_t free_bytes = 0, total_bytes = 0;
    SF_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const size_t reserve = dense_bytes + kMemoryMargin;
    const int affordable =
        free_bytes > reserve ? static_cast<int>(std::min<size_t>(
                                   (free_bytes - reserve) / (dense_bytes + 256), kMaxCopies))
                             : 0;
    const int wanted = cold_copies(dense_bytes, ctx.device.l2_bytes, o.cold_factor, kMaxCopies);
    const int dense_copies = std::min(wanted, affordable);
    if (dense_copies < 1) {
      b->note = "no memory for a dense weight: cuBLAS baseline skipped";
    } else {
      if (dense_copies < wanted) {
        b->note = "memory allows only " + std::to_string(dense_copies) + " of " +
                  std::to_string(wanted) + " cold cuBLAS weight copies";
      }
      SF_RETURN_IF_ERROR(DenseWeightSet::create(shape.n, shape.k, o.dtype, dense_copies,
                                                derive_seed(seed, 0xDE45), stream, &b->dense));
      b->has_dense = true;
    }
  }
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  return Status();
}

RowResult base_row(const BenchContext& ctx, const Shape& shape, const ShapeBuffers& b, int64_t m,
                   Tier tier) {
  const BenchOptions& o = *ctx.options;
  RowResult row;
  row.shape = shape.name;
  row.k = shape.k;
  row.n = shape.n;
  row.m = m;
  row.tier_requested = tier_label(tier);
  row.message = b.note;
  if (b.geometry.n > 0) {
    const RowCost cost = row_cost(b.geometry, o.zero_points, o.act_order, o.bias, m);
    row.bytes = cost.bytes;
    row.weight_bytes = cost.weight_bytes;
    row.flops = cost.flops;
    row.roofline_us = roofline_seconds(cost, ctx.read_tbps, o.peak_tflops) * 1e6;
  }
  row.weight_copies = b.weights.copies();
  return row;
}

void mark_check_failure(RowResult* row, const std::string& what) {
  if (row->status == RowStatus::kOk) row->status = RowStatus::kCheckFailed;
  if (!row->message.empty()) row->message += "; ";
  row->message += what;
  std::printf("CHECK FAILED %s M=%lld tier=%s: %s\n", row->shape.c_str(),
              static_cast<long long>(row->m), row->tier_requested.c_str(), what.c_str());
  std::fflush(stdout);
}

// --eager: `calls` enqueued one by one (eager_timer.h), as many rounds as the graph's replays after
// at least one untimed round; the GPU and host figures per call into *us and *host_us.
Status time_calls_eagerly(const BenchContext& ctx, int launches, const EnqueueFn& calls,
                          std::optional<double>* us, std::optional<double>* host_us) {
  const BenchOptions& o = *ctx.options;
  EagerTiming t;
  SF_RETURN_IF_ERROR(
      time_eager(launches, std::max(1, o.warmup_replays), o.replays, ctx.stream, calls, &t));
  *us = t.us_per_call;
  *host_us = t.host_us_per_call;
  return Status();
}

// Call i of a timed sequence of plan p, on weight copy i % copies.
EnqueueFn plan_calls(BenchContext& ctx, ShapeBuffers& b, const Plan& p, const RunArgs& args) {
  return [&ctx, &b, &p, args](int i, cudaStream_t s) {
    RunArgs call = args;
    call.weight = &b.weights.weight(i % b.weights.copies());
    return run(p, call, b.workspace.get(), b.workspace.bytes(), *ctx.sailfish, s);
  };
}

// Times plan p as a row is timed: launch i reads weight copy i % copies, whole rotations only
// (rotation_launches), so every copy's reuse distance is the whole set (> cold_factor x L2)
// within and across replays.
Status time_plan(BenchContext& ctx, ShapeBuffers& b, const Plan& p, const RunArgs& args,
                 GraphTiming* out) {
  const BenchOptions& o = *ctx.options;
  SF_RETURN_IF_ERROR(b.workspace.ensure(workspace_size(p)));
  const int launches = rotation_launches(o.graph_launches, b.weights.copies());
  return time_in_graph(launches, o.warmup_replays, o.replays, ctx.stream,
                       plan_calls(ctx, b, p, args), out);
}

// --eager: the same calls as time_plan's graph, enqueued one by one; checked for unwritten
// output as the graph's replays are.
Status time_plan_eagerly(BenchContext& ctx, ShapeBuffers& b, const Plan& p, const RunArgs& args,
                         RowResult* row) {
  const BenchOptions& o = *ctx.options;
  const int64_t elements = row->m * b.geometry.n;
  SF_RETURN_IF_ERROR(poison_output(b.y.get(), elements, ctx.stream));
  const int launches = rotation_launches(o.graph_launches, b.weights.copies());
  SF_RETURN_IF_ERROR(time_calls_eagerly(ctx, launches, plan_calls(ctx, b, p, args),
                                        &row->eager_us, &row->eager_host_us));
  int64_t nonfinite = 0;
  SF_RETURN_IF_ERROR(ctx.scanner->count(b.y.get(), elements, o.dtype, ctx.stream, &nonfinite));
  if (nonfinite > 0) {
    mark_check_failure(row, std::to_string(nonfinite) +
                                " output elements NaN/Inf after the eager calls");
  }
  return Status();
}

// --tune-recheck: each candidate tune() timed, timed again by time_plan, so the two harnesses'
// figures for the same plans can be set side by side (scripts/perf/tune_harness_probe.sh). Each
// recheck starts once the SM clock reads within kRecheckClockDrop of the highest reading seen
// (tune()'s own, then the rechecks'), or after kRecheckMaxWaitMs, whatever tune()'s own clock
// guard was set to. Without that wait the rechecks after l3-70b.gate_up's tuning ran at 1.67-1.98
// GHz and counted the dip against the candidates timed in it (docs/perf/decode.md, v44-v45).
constexpr double kRecheckClockDrop = 0.03;
constexpr int kRecheckMaxWaitMs = 200;

Status recheck_candidates(BenchContext& ctx, ShapeBuffers& b, const TuneReport& tuning,
                          const RunArgs& args, RowResult* row) {
  double reference = tuning.reference_clock_mhz;
  for (size_t i = 0; i < tuning.candidates.size(); ++i) {
    const Plan& p = tuning.candidates[i].plan;
    SF_RETURN_IF_ERROR(b.workspace.ensure(workspace_size(p)));
    double mhz = 0.0;
    SF_RETURN_IF_ERROR(ctx.clock->measure(ctx.stream, &mhz));
    reference = std::max(reference, mhz);
    const auto waited_from = std::chrono::steady_clock::now();
    while (detail::clock_fell(mhz, reference, kRecheckClockDrop) &&
           std::chrono::steady_clock::now() - waited_from <
               std::chrono::milliseconds(kRecheckMaxWaitMs)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      SF_RETURN_IF_ERROR(ctx.clock->measure(ctx.stream, &mhz));
    }
    // One untimed call outside any graph loads the kernel, as the row's check call does.
    SF_RETURN_IF_ERROR(
        run(p, args, b.workspace.get(), b.workspace.bytes(), *ctx.sailfish, ctx.stream));
    SF_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    GraphTiming t;
    SF_RETURN_IF_ERROR(time_plan(ctx, b, p, args, &t));
    row->tune_candidates[i].bench_us = t.us_per_call;
    double& after = row->tune_candidates[i].bench_sm_clock_mhz;
    SF_RETURN_IF_ERROR(ctx.clock->measure(ctx.stream, &after));
    reference = std::max(reference, after);
  }
  return Status();
}

// One Sailfish row: plan, check once, time in a graph. Errors come back as Status (the caller
// records them); a tier the planner declines is recorded as unsupported here.
Status measure_tier(BenchContext& ctx, ShapeBuffers& b, int64_t m, Tier tier, RowResult* row) {
  const BenchOptions& o = *ctx.options;
  const cudaStream_t stream = ctx.stream;
  const int64_t n = b.geometry.n, k = b.geometry.k;

  const Problem problem = Problem::for_weight(b.weights.weight(0), m, o.dtype, o.bias);
  Options plan_options;
  plan_options.tier = tier;
  plan_options.deterministic = o.deterministic;
  Plan p;
  TuneReport tuning;
  const auto plan_start = std::chrono::steady_clock::now();
  const Status planned =
      o.tune ? tune(problem, o.device, plan_options, b.weights.weight(0), *ctx.sailfish,
                    stream, o.tune_options, &p, &tuning)
             : plan(problem, o.device, plan_options, &p);
  if (!planned.ok()) {
    if (planned.code() != StatusCode::kUnsupported) return planned;
    row->status = RowStatus::kUnsupported;
    row->message = planned.message();
    return Status();
  }
  if (o.tune) {
    // What a caller pays once per (shape, M) at startup: copies, captures and replays included.
    row->tune_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                             plan_start)
                       .count();
    row->tune_chosen = tuning.chosen;
    for (const TuneCandidate& c : tuning.candidates) {
      row->tune_candidates.push_back(
          {c.label, launch_summary(c.plan), c.us_per_call, c.sm_clock_mhz, c.retimes, {}, 0.0});
    }
    row->tune_reference_clock_mhz = tuning.reference_clock_mhz;
    // The tuning's replays just ran at full power: on the large layers the SM clock came down by
    // up to 6% in the row timed right after them (H200, docs/perf/decode.md v32), so let it
    // recover as after a large row.
    if (tuning.candidates.size() > 1 && o.cooldown_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(o.cooldown_ms));
    }
  }
  row->tier = tier_label(p.tier);
  row->reason = p.reason;
  row->launch = launch_summary(p);
  row->deterministic = p.deterministic;
  // The decode and prefill tiers launch with it where the plan says; the dense tier never does.
  row->programmatic_dependent_launch = p.programmatic_dependent_launch && p.tier != Tier::kDense;
  row->workspace_bytes = workspace_size(p);
  SF_RETURN_IF_ERROR(b.workspace.ensure(row->workspace_bytes));

  RunArgs args;
  args.a = b.a.get();
  args.bias = o.bias ? b.bias.get() : nullptr;
  args.y = b.y.get();
  args.weight = &b.weights.weight(0);
  void* const ws = b.workspace.get();
  const size_t ws_bytes = b.workspace.bytes();

  // Check once, outside any graph: poisoned output, copy 0, full NaN scan, then samples. This
  // call also loads the kernels, so no lazy module load happens during capture.
  SF_RETURN_IF_ERROR(poison_output(b.y.get(), m * n, stream));
  SF_RETURN_IF_ERROR(run(p, args, ws, ws_bytes, *ctx.sailfish, stream));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  SF_RETURN_IF_ERROR(ctx.scanner->count(b.y.get(), m * n, o.dtype, stream, &row->check.nonfinite));
  if (row->check.nonfinite > 0) {
    row->check.passed = false;
    row->check.detail = std::to_string(row->check.nonfinite) + " of " + std::to_string(m * n) +
                        " output elements are NaN/Inf (never written, or non-finite)";
  }
  if (b.has_host_weight) {
    CheckTarget target;
    target.a = b.a.get();
    target.y = b.y.get();
    target.m = m;
    target.n = n;
    target.k = k;
    target.dtype = o.dtype;
    target.bias = o.bias ? &b.host_bias : nullptr;
    const std::vector<Sample> samples =
        pick_samples(m, n, o.check_samples, derive_seed(o.seed, uint64_t(k), uint64_t(n), m));
    SF_RETURN_IF_ERROR(check_packed(b.host_weight, target, samples, &row->check));
  }
  row->checked = true;
  if (!row->check.passed) mark_check_failure(row, row->check.detail);

  SF_RETURN_IF_ERROR(poison_output(b.y.get(), m * n, stream));
  GraphTiming t;
  SF_RETURN_IF_ERROR(time_plan(ctx, b, p, args, &t));
  double mhz = 0.0;
  SF_RETURN_IF_ERROR(ctx.clock->measure(stream, &mhz));
  row->sm_clock_mhz = mhz;
  int64_t graph_nonfinite = 0;
  SF_RETURN_IF_ERROR(ctx.scanner->count(b.y.get(), m * n, o.dtype, stream, &graph_nonfinite));
  row->graph_nonfinite = graph_nonfinite;
  if (graph_nonfinite > 0) {
    mark_check_failure(row, std::to_string(graph_nonfinite) +
                                " output elements NaN/Inf after the graph replays");
  }
  // After the row's own timing, so the row is timed as without the flags.
  if (o.eager) SF_RETURN_IF_ERROR(time_plan_eagerly(ctx, b, p, args, row));
  if (o.tune_recheck) SF_RETURN_IF_ERROR(recheck_candidates(ctx, b, tuning, args, row));

  row->launches = t.launches;
  row->us = t.us_per_call;
  row->replay_min_ms = t.min_replay_ms;
  row->replay_median_ms = t.median_replay_ms;
  row->replay_max_ms = t.max_replay_ms;
  const double seconds = t.us_per_call * 1e-6;
  row->tbps = row->bytes / seconds / 1e12;
  row->tflops = row->flops / seconds / 1e12;
  row->pct_roofline = 100.0 * row->roofline_us / t.us_per_call;
  return Status();
}

// One floor timing: its loads, its launch, and its time per call.
struct FloorTiming {
  FloorLaunch how;
  double us = 0.0;
  std::optional<double> eager_us, eager_host_us;  // --eager
  std::string name() const {
    return std::string(floor_loads_name(how.loads)) +
           (how.programmatic_dependent_launch ? "/pdl" : "/plain");
  }
};

struct Baselines {
  std::optional<double> cublas_us;
  std::optional<double> cublas_eager_us, cublas_eager_host_us;  // --eager
  std::vector<FloorTiming> floors;  // every form, timed back to back
  int cublas_launches = 0, cublas_copies = 0;
  std::optional<bool> cublas_check_passed;
  std::string note;
};

// cuBLAS on the dense copies, checked against the host like Sailfish (a wrong layout here would
// make every ratio meaningless), then timed the same way.
Status measure_cublas(BenchContext& ctx, ShapeBuffers& b, int64_t m, Baselines* out) {
  const BenchOptions& o = *ctx.options;
  const cudaStream_t stream = ctx.stream;
  const int64_t n = b.geometry.n, k = b.geometry.k;
  const void* bias = o.bias ? b.bias.get() : nullptr;
  const Status prepared = ctx.cublas->prepare(m, n, k, bias);
  if (!prepared.ok()) {
    if (prepared.code() != StatusCode::kUnsupported) return prepared;
    out->note = prepared.message();
    return Status();
  }
  SF_RETURN_IF_ERROR(poison_output(b.y.get(), m * n, stream));
  SF_RETURN_IF_ERROR(ctx.cublas->enqueue(b.a.get(), b.dense.weight(0), b.y.get(), stream));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  CheckResult check;
  SF_RETURN_IF_ERROR(ctx.scanner->count(b.y.get(), m * n, o.dtype, stream, &check.nonfinite));
  if (check.nonfinite > 0) {
    check.passed = false;
    check.detail = std::to_string(check.nonfinite) + " output elements NaN/Inf";
  }
  if (o.check_samples > 0) {
    CheckTarget target;
    target.a = b.a.get();
    target.y = b.y.get();
    target.m = m;
    target.n = n;
    target.k = k;
    target.dtype = o.dtype;
    target.bias = o.bias ? &b.host_bias : nullptr;
    const std::vector<Sample> samples = pick_samples(
        m, n, o.check_samples, derive_seed(o.seed, uint64_t(k), uint64_t(n), m ^ 0xC0B1A5));
    SF_RETURN_IF_ERROR(check_dense(b.dense.weight(0), target, samples, &check));
  }
  out->cublas_check_passed = check.passed;
  if (!check.passed) {
    ++ctx.baseline_failures;
    std::printf("CHECK FAILED cuBLAS baseline M=%lld: %s\n", static_cast<long long>(m),
                check.detail.c_str());
  }

  const int copies = b.dense.copies();
  const int launches = rotation_launches(o.graph_launches, copies);
  const EnqueueFn calls = [&](int i, cudaStream_t s) {
    return ctx.cublas->enqueue(b.a.get(), b.dense.weight(i % copies), b.y.get(), s);
  };
  GraphTiming t;
  SF_RETURN_IF_ERROR(time_in_graph(launches, o.warmup_replays, o.replays, stream, calls, &t));
  out->cublas_us = t.us_per_call;
  out->cublas_launches = t.launches;
  out->cublas_copies = copies;
  if (o.eager) {
    SF_RETURN_IF_ERROR(time_calls_eagerly(ctx, launches, calls, &out->cublas_eager_us,
                                          &out->cublas_eager_host_us));
  }
  return Status();
}

// The floor: the same copies, the same rotation and graph size as the Sailfish rows, in each
// load form, plain and with programmatic dependent launch (a row takes the fastest form launched
// as its plan launches: pick_floor). Programmatic launches need sm_90.
Status measure_floor(BenchContext& ctx, ShapeBuffers& b, Baselines* out) {
  const BenchOptions& o = *ctx.options;
  const int copies = b.weights.copies();
  const int launches = rotation_launches(o.graph_launches, copies);
  const size_t bytes = b.weights.bytes_per_copy();
  for (const bool programmatic : {false, true}) {
    if (programmatic && ctx.device.cc_major < 9) continue;
    for (const FloorLoads loads : kFloorLoadForms) {
      FloorTiming f;
      f.how.loads = loads;
      f.how.programmatic_dependent_launch = programmatic;
      const EnqueueFn calls = [&](int i, cudaStream_t s) {
        return ctx.reader->launch(b.weights.copy_begin(i % copies), bytes, s, f.how);
      };
      GraphTiming t;
      SF_RETURN_IF_ERROR(
          time_in_graph(launches, o.warmup_replays, o.replays, ctx.stream, calls, &t));
      f.us = t.us_per_call;
      if (o.eager) {
        SF_RETURN_IF_ERROR(
            time_calls_eagerly(ctx, launches, calls, &f.eager_us, &f.eager_host_us));
      }
      out->floors.push_back(f);
    }
  }
  return Status();
}

// The row's floor: the fastest form launched the way the row's plan launches (a row without a
// plan, or on a GPU without programmatic launches, gets the plain launches).
void pick_floor(const Baselines& base, RowResult* row) {
  const bool programmatic = row->programmatic_dependent_launch.value_or(false);
  const FloorTiming* best = nullptr;
  for (const FloorTiming& f : base.floors) {
    row->floor_forms.emplace_back(f.name(), f.us);
    if (f.how.programmatic_dependent_launch == programmatic && (!best || f.us < best->us)) {
      best = &f;
    }
  }
  if (best == nullptr) return;
  row->floor_us = best->us;
  row->floor_form = best->name();
  row->floor_eager_us = best->eager_us;
  row->floor_eager_host_us = best->eager_host_us;
}

void record_error(RowResult* row, const Status& st) {
  row->status = RowStatus::kError;
  if (!row->message.empty()) row->message += "; ";
  row->message += st.to_string();
  std::printf("ERROR %s M=%lld tier=%s: %s\n", row->shape.c_str(), static_cast<long long>(row->m),
              row->tier_requested.c_str(), st.to_string().c_str());
  std::fflush(stdout);
}

void cooldown_if_needed(BenchContext& ctx, int64_t m) {
  const BenchOptions& o = *ctx.options;
  // DESIGN.md: large-M rows push the H200 to its power cap and the slowdown lingers, so a small-M
  // row never directly follows a large-M one.
  if (o.cooldown_ms > 0 && ctx.last_m >= o.cooldown_after_m && m < ctx.last_m) {
    std::this_thread::sleep_for(std::chrono::milliseconds(o.cooldown_ms));
  }
}

}  // namespace

Status run_shape(BenchContext& ctx, const Shape& shape, std::vector<RowResult>* rows) {
  const BenchOptions& o = *ctx.options;
  ShapeBuffers b;
  const Status ready = setup_shape(ctx, shape, &b);
  if (!ready.ok()) {
    for (int64_t m : o.m_values) {
      for (Tier tier : o.tiers) {
        RowResult row = base_row(ctx, shape, b, m, tier);
        record_error(&row, ready);
        rows->push_back(std::move(row));
      }
    }
    return context_healthy() ? Status() : ready;
  }

  for (int64_t m : o.m_values) {
    cooldown_if_needed(ctx, m);
    const size_t first = rows->size();
    for (Tier tier : o.tiers) {
      RowResult row = base_row(ctx, shape, b, m, tier);
      const Status st = measure_tier(ctx, b, m, tier, &row);
      if (!st.ok()) {
        record_error(&row, st);
        if (!context_healthy()) {
          rows->push_back(std::move(row));
          return st;
        }
      }
      rows->push_back(std::move(row));
    }

    Baselines base;
    if (b.has_dense) {
      const Status st = measure_cublas(ctx, b, m, &base);
      if (!st.ok()) {
        ++ctx.baseline_failures;
        base.note = "cuBLAS baseline failed: " + st.to_string();
        std::printf("ERROR %s M=%lld cuBLAS: %s\n", shape.name.c_str(),
                    static_cast<long long>(m), st.to_string().c_str());
        if (!context_healthy()) return st;
      }
    }
    {
      const Status st = measure_floor(ctx, b, &base);
      if (!st.ok()) {
        ++ctx.baseline_failures;
        base.note += (base.note.empty() ? "" : "; ") + ("floor failed: " + st.to_string());
        std::printf("ERROR %s M=%lld floor: %s\n", shape.name.c_str(),
                    static_cast<long long>(m), st.to_string().c_str());
        if (!context_healthy()) return st;
      }
    }
    ctx.last_m = m;

    for (size_t i = first; i < rows->size(); ++i) {
      RowResult& row = (*rows)[i];
      row.cublas_us = base.cublas_us;
      row.cublas_launches = base.cublas_launches;
      row.cublas_copies = base.cublas_copies;
      row.cublas_check_passed = base.cublas_check_passed;
      row.cublas_eager_us = base.cublas_eager_us;
      row.cublas_eager_host_us = base.cublas_eager_host_us;
      pick_floor(base, &row);
      if (row.us && base.cublas_us) row.ratio_vs_cublas = *base.cublas_us / *row.us;
      if (row.us && row.floor_us) row.ratio_to_floor = *row.us / *row.floor_us;
      if (!base.note.empty()) row.message += (row.message.empty() ? "" : "; ") + base.note;
      std::printf("%s\n", table_line(row).c_str());
    }
    std::fflush(stdout);
  }
  return Status();
}

}  // namespace sailfish::bench
