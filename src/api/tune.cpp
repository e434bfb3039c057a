// tune(): plan()'s choice and its alternatives, each timed as the bench times a layer (one CUDA
// graph of calls over rotating weight copies, replays timed back to back with events, the median
// kept), and the fastest returned. include/sailfish/tune.h says when to call it.
#include "sailfish/tune.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "api/environment.h"
#include "api/sm_clock.h"
#include "api/tune_clock.h"
#include "api/tune_schedule.h"
#include "common/cuda_check.h"
#include "decode/config.h"
#include "prefill/launch.h"
#include "sailfish/quantize.h"

namespace sailfish {

namespace {

// The M range where the tiers and depths tune() compares meet: decode's 1-8 token tiles and the
// prefill tier's narrow tiles (docs/perf/decode.md, Crossover v2). Above it plan() has one
// candidate worth timing.
constexpr int64_t kTuneMaxM = 64;
// The deepest split tune() times: the cluster epilogue's largest cluster.
constexpr int kTuneMaxDecodeSplits = decode::kMaxClusterSplits;
// The clock guard's cool-down step (TuneOptions::max_cool_down_ms): a sleep, then a reading.
constexpr int kCoolDownPauseMs = 2;

// The warp-split kernel's stage counts a warp, each timed at every depth where the options leave
// the count to the rules: those rules pick the count by the grid (decode/warp_split_instances.h),
// and at a given depth another count ran up to 1.09x faster on the H200 (docs/perf/decode.md, v43:
// int8 l3-8b.gate_up at M = 4, one split, five stages against the rules' four; int4 l3-8b.qkv at
// M = 24, two splits, three against four, 0.936x). A count the kernel for this M lacks makes
// plan() keep its own, a launch add_candidate then drops as a repeat.
// decode/warp_split_instances.h, warp_split_stage_count: the counts some instance is built with.
std::vector<int> decode_stage_counts() {
  std::vector<int> counts;
  for (int slot = 0; slot < decode::kWarpSplitStageCountSlots; ++slot) {
    if (decode::warp_split_stage_count(slot) > 0) {
      counts.push_back(decode::warp_split_stage_count(slot));
    }
  }
  return counts;
}

// Scope guards for the CUDA objects tune() makes; each frees what it holds on every return path.
struct StreamHolder {
  cudaStream_t stream = nullptr;
  ~StreamHolder() {
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};
struct EventHolder {
  cudaEvent_t event = nullptr;
  ~EventHolder() {
    if (event != nullptr) cudaEventDestroy(event);
  }
};
struct MemoryHolder {
  void* ptr = nullptr;
  ~MemoryHolder() {
    if (ptr != nullptr) cudaFree(ptr);
  }
  Status allocate(size_t bytes, const char* what) {
    if (bytes == 0) return Status();
    const cudaError_t err = cudaMalloc(&ptr, bytes);
    if (err == cudaSuccess) return Status();
    ptr = nullptr;
    cudaGetLastError();  // an allocation failure is not sticky; clear it
    return Status(StatusCode::kCudaError,
                  detail::concat("tune: could not allocate ", bytes, " bytes for ", what, " (",
                                 cudaGetErrorString(err), ")"));
  }
};
struct GraphHolder {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  GraphHolder() = default;
  GraphHolder(const GraphHolder&) = delete;
  GraphHolder& operator=(const GraphHolder&) = delete;
  ~GraphHolder() {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
};

Status validate_tune_options(const TuneOptions& t) {
  if (t.launches < 1 || t.launches > 4096) {
    return invalid_argument("tune: launches is ", t.launches, "; accepted: 1-4096");
  }
  if (t.rounds < 1 || t.rounds > 1000) {
    return invalid_argument("tune: rounds is ", t.rounds, "; accepted: 1-1000");
  }
  if (!(t.min_gain >= 0.0 && t.min_gain < 0.5)) {
    return invalid_argument("tune: min_gain is ", t.min_gain, "; accepted: [0, 0.5)");
  }
  if (!(t.cold_l2_factor >= 0.0 && t.cold_l2_factor <= 16.0)) {
    return invalid_argument("tune: cold_l2_factor is ", t.cold_l2_factor, "; accepted: [0, 16]");
  }
  if (t.max_weight_copies < 1 || t.max_weight_copies > 1024) {
    return invalid_argument("tune: max_weight_copies is ", t.max_weight_copies,
                            "; accepted: 1-1024");
  }
  if (!(t.clock_drop >= 0.0 && t.clock_drop < 0.5)) {
    return invalid_argument("tune: clock_drop is ", t.clock_drop,
                            "; accepted: [0, 0.5), 0 turns the clock guard off");
  }
  if (t.max_retimes < 0 || t.max_retimes > 10) {
    return invalid_argument("tune: max_retimes is ", t.max_retimes, "; accepted: 0-10");
  }
  if (t.max_cool_down_ms < 0 || t.max_cool_down_ms > 10000) {
    return invalid_argument("tune: max_cool_down_ms is ", t.max_cool_down_ms,
                            "; accepted: 0-10000");
  }
  return Status();
}

// tune() reads the weight only when it times, but a weight that does not fit the problem is a
// caller's mistake either way: say so at once.
Status validate_weight(const Problem& p, const DeviceWeight& w) {
  if (Status valid = validate(w); !valid.ok()) {
    return Status(valid.code(), "tune: " + valid.message());
  }
  const PackedGeometry &a = w.geometry, &b = p.geometry;
  if (a.n != b.n || a.k != b.k || a.bits != b.bits || a.group_size != b.group_size ||
      w.scale_dtype != p.scale_dtype || w.zero_kind != p.zero_kind ||
      (w.perm != nullptr) != p.act_order) {
    return invalid_argument("tune: the weight [n=", a.n, ", k=", a.k, ", bits=", a.bits,
                            ", group=", a.group_size, ", scales ", dtype_name(w.scale_dtype),
                            ", zero ", zero_point_kind_name(w.zero_kind), ", act_order ",
                            w.perm != nullptr, "] does not match the problem's [n=", b.n,
                            ", k=", b.k, ", bits=", b.bits, ", group=", b.group_size, ", scales ",
                            dtype_name(p.scale_dtype), ", zero ",
                            zero_point_kind_name(p.zero_kind), ", act_order ", p.act_order,
                            "]; make the problem with Problem::for_weight");
  }
  return Status();
}

// Two plans that launch the same kernels with the same grids: timing both would only measure
// noise, so the later one is dropped.
bool same_launch(const Plan& a, const Plan& b) {
  if (a.tier != b.tier) return false;
  if (a.tier == Tier::kDecode) {
    const DecodePlan &x = a.decode, &y = b.decode;
    return x.token_tiles == y.token_tiles && x.m_groups == y.m_groups && x.splits == y.splits &&
           x.epilogue == y.epilogue && x.warp_split == y.warp_split &&
           x.warp_stages == y.warp_stages && x.stream_k_strips == y.stream_k_strips &&
           x.cluster_push == y.cluster_push && x.warps == y.warps;
  }
  if (a.tier == Tier::kPrefill) {
    const PrefillPlan &x = a.prefill, &y = b.prefill;
    return x.tokens == y.tokens && x.splits == y.splits && x.stream_k == y.stream_k &&
           x.stages == y.stages && x.grid == y.grid;
  }
  return a.dense_chunk_rows == b.dense_chunk_rows;
}

// Adds the plan of `options` unless plan() declines it (a depth this problem cannot take) or it
// repeats a candidate. Other plan() failures are errors.
Status add_candidate(const Problem& problem, int device, const Options& options,
                     std::string label, std::vector<TuneCandidate>* candidates) {
  Plan p;
  const Status st = plan(problem, device, options, &p);
  if (st.code() == StatusCode::kInvalidArgument || st.code() == StatusCode::kUnsupported) {
    return Status();
  }
  SF_RETURN_IF_ERROR(st);
  for (const TuneCandidate& c : *candidates) {
    if (same_launch(c.plan, p)) return Status();
  }
  TuneCandidate c;
  c.label = std::move(label);
  c.options = options;
  c.plan = std::move(p);
  candidates->push_back(std::move(c));
  return Status();
}

Status list_candidates(const Problem& problem, int device, const Options& options,
                       std::vector<TuneCandidate>* candidates) {
  api::ResolvedOptions resolved;
  SF_RETURN_IF_ERROR(api::resolve_options(options, &resolved));
  Plan rule;
  SF_RETURN_IF_ERROR(plan(problem, device, options, &rule));
  candidates->push_back(TuneCandidate{"rule", options, rule, 0.0});
  if (problem.m < 1 || problem.m > kTuneMaxM) return Status();
  const bool auto_tier = resolved.tier == Tier::kAuto;
  if (!resolved.decode_splits.has_value() && (auto_tier || resolved.tier == Tier::kDecode)) {
    const bool stages_free = !resolved.decode_warp_stages.has_value();
    for (int s = 1; s <= kTuneMaxDecodeSplits; ++s) {
      Options o = options;
      o.tier = Tier::kDecode;
      o.decode_splits = s;
      SF_RETURN_IF_ERROR(
          add_candidate(problem, device, o, detail::concat("decode splits=", s), candidates));
      if (!stages_free) continue;
      for (const int k : decode_stage_counts()) {
        Options staged = o;
        staged.decode_warp_stages = k;
        SF_RETURN_IF_ERROR(add_candidate(problem, device, staged,
                                         detail::concat("decode splits=", s, " stages=", k),
                                         candidates));
      }
    }
  }
  if (auto_tier && prefill::prefill_available(device).ok()) {
    Options o = options;
    o.tier = Tier::kPrefill;
    SF_RETURN_IF_ERROR(add_candidate(problem, device, o, "prefill rule", candidates));
  }
  return Status();
}

// Weight copies for cold-cache timing: copy 0 is the caller's weight; the others are
// DeviceWeightStorage copies of its codes, scales and zero planes (the act-order permutation is
// shared: a few KB the prep kernel reads, not part of the weight stream).
struct WeightCopies {
  std::vector<DeviceWeightStorage> storage;
  std::vector<DeviceWeight> views;
};

// Bytes of one [scale_rows][n_pad] plane of 16-bit values: the scales, or each zero-point plane
// (DeviceWeight::zero_fold holds shifts and folds, two planes).
size_t plane_bytes(const PackedGeometry& g) {
  return static_cast<size_t>(g.scale_rows * g.n_pad) * 2;
}

// One more copy of `weight` in out, filled on stream.
Status add_weight_copy(const DeviceWeight& weight, cudaStream_t stream, WeightCopies* out) {
  DeviceWeightStorage copy;
  const Status allocated = DeviceWeightStorage::allocate(weight.geometry, weight.scale_dtype,
                                                         weight.zero_kind, false, &copy);
  if (!allocated.ok()) {
    cudaGetLastError();  // an allocation failure is not sticky; clear it
    return Status(allocated.code(),
                  "tune: the weight copies that keep its timing cold (TuneOptions::cold_l2_factor "
                  "= 0 times one copy): " + allocated.message());
  }
  DeviceWeight& v = copy.mutable_view();
  const PackedGeometry& g = weight.geometry;
  const size_t meta_bytes = plane_bytes(g);
  SF_CUDA_CHECK(cudaMemcpyAsync(const_cast<void*>(v.codes), weight.codes,
                                static_cast<size_t>(g.code_bytes()), cudaMemcpyDeviceToDevice,
                                stream));
  SF_CUDA_CHECK(cudaMemcpyAsync(const_cast<void*>(v.scales), weight.scales, meta_bytes,
                                cudaMemcpyDeviceToDevice, stream));
  if (v.zero_fold != nullptr) {  // shifts and folds
    SF_CUDA_CHECK(cudaMemcpyAsync(const_cast<void*>(v.zero_fold), weight.zero_fold,
                                  2 * meta_bytes, cudaMemcpyDeviceToDevice, stream));
  }
  v.perm = weight.perm;
  out->views.push_back(v);
  out->storage.push_back(std::move(copy));
  return Status();
}

// The bytes one call streams from a weight: codes, scales, and the zero planes if any.
size_t weight_stream_bytes(const DeviceWeight& weight) {
  const PackedGeometry& g = weight.geometry;
  const bool zero = weight.zero_kind != ZeroPointKind::kNone;
  return static_cast<size_t>(g.code_bytes()) + plane_bytes(g) * (zero ? 3 : 1);
}

Status make_weight_copies(const DeviceWeight& weight, int device, const TuneOptions& t,
                          cudaStream_t stream, WeightCopies* out) {
  out->views.assign(1, weight);
  if (t.cold_l2_factor <= 0.0) return Status();
  int l2_bytes = 0;
  SF_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  const double wanted =
      std::floor(t.cold_l2_factor * l2_bytes / static_cast<double>(weight_stream_bytes(weight))) +
      1;
  const int copies =
      static_cast<int>(std::clamp(wanted, 1.0, static_cast<double>(t.max_weight_copies)));
  while (static_cast<int>(out->views.size()) < copies) {
    SF_RETURN_IF_ERROR(add_weight_copy(weight, stream, out));
  }
  return Status();
}

// Uploads `count` activation-type values drawn uniformly from [-1, 1]: the kernels' time does not
// depend on the values, but NaN-free inputs keep the runs ordinary.
Status upload_random(size_t count, DType dtype, cudaStream_t stream, MemoryHolder* out,
                     const char* what) {
  SF_RETURN_IF_ERROR(out->allocate(count * 2, what));
  if (count == 0) return Status();
  std::mt19937 rng(0x5A11F15u);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<uint16_t> host(count);
  for (uint16_t& v : host) v = float_to_bits(unit(rng), dtype);
  SF_CUDA_CHECK(cudaMemcpyAsync(out->ptr, host.data(), count * 2, cudaMemcpyHostToDevice, stream));
  // The host vector dies with this call: wait for the copy.
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  return Status();
}

// One candidate's graph: `launches` calls, call i on weight copy i % copies.
Status capture(const Plan& plan, const RunArgs& args, const WeightCopies& weights, int launches,
               void* workspace, size_t workspace_bytes, const Context& context,
               cudaStream_t stream, GraphHolder* out) {
  // Thread-local mode: other threads of the caller keep working while tune() captures.
  SF_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  Status enqueued;
  for (int i = 0; i < launches && enqueued.ok(); ++i) {
    RunArgs call = args;
    call.weight = &weights.views[static_cast<size_t>(i) % weights.views.size()];
    enqueued = run(plan, call, workspace, workspace_bytes, context, stream);
  }
  const cudaError_t ended = cudaStreamEndCapture(stream, &out->graph);
  if (!enqueued.ok()) {
    cudaGetLastError();  // an invalidated capture leaves an error behind; the Status says it all
    return Status(enqueued.code(), "tune: while capturing a CUDA graph: " + enqueued.message());
  }
  SF_CUDA_CHECK(ended);
  SF_CUDA_CHECK(cudaGraphInstantiate(&out->exec, out->graph, 0));
  SF_CUDA_CHECK(cudaGraphUpload(out->exec, stream));
  return Status();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Times every candidate: one untimed call each (it loads the kernels and checks the arguments),
// one warm-up replay of its graph, then `rounds` timed replays of each, in the order of
// tune_schedule.h, block by block under the clock guard of tune_clock.h.
Status time_candidates(const Problem& problem, const DeviceWeight& weight, int device,
                       const TuneOptions& t, const Context& context, cudaStream_t stream,
                       std::vector<TuneCandidate>* candidates, int* copies_used,
                       double* reference_mhz) {
  WeightCopies weights;
  SF_RETURN_IF_ERROR(make_weight_copies(weight, device, t, stream, &weights));
  const int copies = static_cast<int>(weights.views.size());
  *copies_used = copies;
  const int launches = (t.launches + copies - 1) / copies * copies;

  const PackedGeometry& g = problem.geometry;
  MemoryHolder a, bias, y, workspace;
  SF_RETURN_IF_ERROR(upload_random(static_cast<size_t>(problem.m * g.k), problem.act_dtype,
                                   stream, &a, "the activations"));
  if (problem.has_bias) {
    SF_RETURN_IF_ERROR(upload_random(static_cast<size_t>(g.n), problem.act_dtype, stream, &bias,
                                     "the bias"));
  }
  SF_RETURN_IF_ERROR(y.allocate(static_cast<size_t>(problem.m * g.n) * 2, "the output"));
  size_t workspace_bytes = 0;
  for (const TuneCandidate& c : *candidates) {
    workspace_bytes = std::max(workspace_bytes, workspace_size(c.plan));
  }
  SF_RETURN_IF_ERROR(workspace.allocate(workspace_bytes, "the workspace"));

  RunArgs args;
  args.a = a.ptr;
  args.bias = bias.ptr;
  args.y = y.ptr;
  std::vector<GraphHolder> graphs(candidates->size());
  for (size_t i = 0; i < candidates->size(); ++i) {
    const Plan& p = (*candidates)[i].plan;
    args.weight = &weight;
    const Status ran = run(p, args, workspace.ptr, workspace_bytes, context, stream);
    if (!ran.ok()) return Status(ran.code(), "tune: " + ran.message());
    SF_CUDA_CHECK(cudaStreamSynchronize(stream));
    SF_RETURN_IF_ERROR(capture(p, args, weights, launches, workspace.ptr, workspace_bytes,
                               context, stream, &graphs[i]));
    SF_CUDA_CHECK(cudaGraphLaunch(graphs[i].exec, stream));
  }
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));

  EventHolder start, stop;
  SF_CUDA_CHECK(cudaEventCreate(&start.event));
  SF_CUDA_CHECK(cudaEventCreate(&stop.event));
  auto run_replay = [&](int candidate, bool timed, double* us) -> Status {
    SF_CUDA_CHECK(cudaEventRecord(start.event, stream));
    SF_CUDA_CHECK(cudaGraphLaunch(graphs[static_cast<size_t>(candidate)].exec, stream));
    SF_CUDA_CHECK(cudaEventRecord(stop.event, stream));
    // One replay at a time: a replay queued behind another would start the moment the last
    // one's kernels drain, not from an idle GPU, and favor whoever follows a slow candidate.
    SF_CUDA_CHECK(cudaEventSynchronize(stop.event));
    if (!timed) return Status();
    float ms = 0.0f;
    SF_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event, stop.event));
    *us = static_cast<double>(ms) * 1e3 / launches;
    return Status();
  };
  detail::SmClockProbe clock;
  detail::ClockGuard guard;
  guard.drop = t.clock_drop;
  guard.max_retimes = t.max_retimes;
  guard.max_cool_down_polls = t.max_cool_down_ms / kCoolDownPauseMs;
  if (guard.drop > 0.0) SF_RETURN_IF_ERROR(clock.init());
  auto read_clock = [&](double* mhz) { return clock.measure(stream, mhz); };
  auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(kCoolDownPauseMs)); };
  detail::TunedTimes times;
  SF_RETURN_IF_ERROR(detail::time_schedule(
      detail::tune_replay_schedule(static_cast<int>(candidates->size()), t.rounds, t.interleave),
      static_cast<int>(candidates->size()), guard, run_replay, read_clock, pause, &times));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  SF_CUDA_CHECK(cudaGetLastError());
  *reference_mhz = times.reference_mhz;
  for (size_t i = 0; i < candidates->size(); ++i) {
    TuneCandidate& c = (*candidates)[i];
    c.us_per_call = median(times.us[i]);
    c.sm_clock_mhz = times.mhz[i];
    c.retimes = times.retimes[i];
  }
  return Status();
}

}  // namespace

Status tune(const Problem& problem, int device, const Options& options, const DeviceWeight& weight,
            const Context& context, cudaStream_t stream, const TuneOptions& tune_options,
            Plan* out, TuneReport* report) {
  if (out == nullptr) return invalid_argument("tune: out is null");
  SF_RETURN_IF_ERROR(validate_tune_options(tune_options));
  SF_RETURN_IF_ERROR(validate_weight(problem, weight));
  if (device < 0) SF_CUDA_CHECK(cudaGetDevice(&device));
  if (context.device() != device) {
    return invalid_argument("tune: the context is for device ", context.device(),
                            " but tuning is for device ", device);
  }
  std::vector<TuneCandidate> candidates;
  SF_RETURN_IF_ERROR(list_candidates(problem, device, options, &candidates));

  int copies = 0;
  double reference_mhz = 0.0;
  if (candidates.size() > 1) {
    StreamHolder own;
    SF_CUDA_CHECK(cudaStreamCreateWithFlags(&own.stream, cudaStreamNonBlocking));
    // Order after the caller's work (the weight's upload), without touching their stream again.
    EventHolder ready;
    SF_CUDA_CHECK(cudaEventCreateWithFlags(&ready.event, cudaEventDisableTiming));
    SF_CUDA_CHECK(cudaEventRecord(ready.event, stream));
    SF_CUDA_CHECK(cudaStreamWaitEvent(own.stream, ready.event, 0));
    const Status timed =
        time_candidates(problem, weight, device, tune_options, context, own.stream, &candidates,
                        &copies, &reference_mhz);
    // Whatever happened, leave nothing of ours in flight when the buffers are freed.
    const cudaError_t drained = cudaStreamSynchronize(own.stream);
    SF_RETURN_IF_ERROR(timed);
    SF_CUDA_CHECK(drained);
  }

  int chosen = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (candidates[i].us_per_call < candidates[static_cast<size_t>(chosen)].us_per_call) {
      chosen = static_cast<int>(i);
    }
  }
  if (chosen != 0 &&
      candidates[static_cast<size_t>(chosen)].us_per_call >
          (1.0 - tune_options.min_gain) * candidates[0].us_per_call) {
    chosen = 0;
  }
  *out = candidates[static_cast<size_t>(chosen)].plan;
  if (candidates.size() > 1) {
    const TuneCandidate& c = candidates[static_cast<size_t>(chosen)];
    out->reason = detail::concat("tuned: ", c.label, " ", c.us_per_call, " us of ",
                                 candidates.size(), " candidates (rule ",
                                 candidates[0].us_per_call, " us; ", c.plan.reason, ")");
  }
  if (report != nullptr) {
    report->candidates = std::move(candidates);
    report->chosen = chosen;
    report->weight_copies = copies;
    report->reference_clock_mhz = reference_mhz;
  }
  return Status();
}

}  // namespace sailfish
