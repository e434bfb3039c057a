#include "gemm_check.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/parallel_rows.h"
#include "gpu_test_helpers.h"
#include "sailfish/quantize.h"
#include "sailfish/reference.h"

namespace sailfish::testing {

namespace {

// Poisoned rows after Y that a run must leave alone: a 64-token tile written past M lands in them.
constexpr int64_t kGuardRows = 64;

GemmCheckResult failure(const std::string& what, const Status& st) {
  GemmCheckResult r;
  r.message = what + ": " + st.to_string();
  return r;
}

GemmCheckResult failure(const std::string& what, cudaError_t err) {
  GemmCheckResult r;
  r.message = what + ": " + cudaGetErrorString(err);
  return r;
}

}  // namespace

std::vector<double> plain_implementation(const std::vector<double>& a, int64_t m,
                                         const QuantizedWeight& w, const std::vector<double>& bias,
                                         DType dtype) {
  std::vector<double> y(static_cast<size_t>(m * w.n));
  // A weight row at a time, the rows over threads (as reference_gemm): the same sums in the same
  // order whatever the thread count.
  detail::parallel_rows(w.n, m * w.k, [&](int64_t row_begin, int64_t row_end) {
    std::vector<float> wq(static_cast<size_t>(w.k));
    for (int64_t nn = row_begin; nn < row_end; ++nn) {
      for (int64_t kk = 0; kk < w.k; ++kk) {
        wq[static_cast<size_t>(kk)] =
            round_to_dtype(static_cast<float>(w.dequantized(nn, kk)), dtype);
      }
      for (int64_t i = 0; i < m; ++i) {
        float acc = 0.0f;
        for (int64_t kk = 0; kk < w.k; ++kk) {
          acc += static_cast<float>(a[static_cast<size_t>(i * w.k + kk)]) *
                 wq[static_cast<size_t>(kk)];
        }
        if (!bias.empty()) acc += static_cast<float>(bias[static_cast<size_t>(nn)]);
        y[static_cast<size_t>(i * w.n + nn)] = round_to_dtype(acc, dtype);
      }
    }
  });
  return y;
}

namespace {

// What every variant of one case shares: activations and bias drawn from the seed, the float64
// reference and the plain implementation on them, the uploaded weight and a context.
struct SharedInputs {
  std::vector<uint16_t> a_bits, bias_bits;
  std::vector<double> a, bias;
  std::vector<double> reference, plain;
  DeviceWeightStorage storage;
  std::unique_ptr<Context> context;
};

GemmCheckResult prepare(const GemmCase& c, uint64_t seed, SharedInputs* in) {
  const QuantizedWeight& w = c.weight;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);

  // Activations and bias, exactly representable in the activation type.
  in->a_bits.resize(static_cast<size_t>(c.m * w.k));
  in->a.resize(in->a_bits.size());
  for (size_t i = 0; i < in->a.size(); ++i) {
    in->a_bits[i] = float_to_bits(unit(rng), c.dtype);
    in->a[i] = bits_to_float(in->a_bits[i], c.dtype);
  }
  if (c.bias) {
    // The bias from a stream of its own, so that at one seed a smaller M's activations are the
    // first rows of a larger M's and the bias is the same (BatchInvariance compares such runs).
    std::mt19937_64 bias_rng(seed ^ 0x9E3779B97F4A7C15ull);
    in->bias_bits.resize(static_cast<size_t>(w.n));
    in->bias.resize(in->bias_bits.size());
    for (size_t i = 0; i < in->bias.size(); ++i) {
      in->bias_bits[i] = float_to_bits(unit(bias_rng), c.dtype);
      in->bias[i] = bits_to_float(in->bias_bits[i], c.dtype);
    }
  }

  PackedWeight packed;
  if (Status st = pack(w, c.dtype, &packed); !st.ok()) return failure("pack", st);
  if (Status st = DeviceWeightStorage::upload(packed, &in->storage); !st.ok()) {
    return failure("upload", st);
  }
  if (Status st = Context::create(-1, &in->context); !st.ok()) {
    return failure("Context::create", st);
  }
  in->reference.resize(static_cast<size_t>(c.m * w.n));
  if (Status st = reference_gemm(in->a.data(), c.m, w, c.bias ? in->bias.data() : nullptr,
                                 in->reference.data());
      !st.ok()) {
    return failure("reference", st);
  }
  in->plain = plain_implementation(in->a, c.m, w, in->bias, c.dtype);
  GemmCheckResult ok;
  ok.ok = true;
  return ok;
}

// GemmCase::graph_replays: enqueue (one run) captured in a graph on a stream of its own, then
// `replays` launches of it, y poisoned before each (on that stream) and `check(replay)` after
// each; false with *failure set if a CUDA call fails or check returns false (check sets it).
template <typename Enqueue, typename Check>
bool replay_in_graph(int replays, const DeviceBuffer& y, Enqueue enqueue, Check check,
                     std::string* failure) {
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  auto cuda_failed = [&](const char* what, cudaError_t e) {
    *failure = std::string(what) + ": " + cudaGetErrorString(e);
    return false;
  };
  bool ok = [&]() {
    cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) return cuda_failed("cudaStreamCreateWithFlags", e);
    e = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) return cuda_failed("cudaStreamBeginCapture", e);
    const Status enqueued = enqueue(stream);
    e = cudaStreamEndCapture(stream, &graph);
    if (!enqueued.ok()) {
      *failure = "run (captured): " + enqueued.to_string();
      return false;
    }
    if (e != cudaSuccess) return cuda_failed("cudaStreamEndCapture", e);
    e = cudaGraphInstantiate(&exec, graph, 0);
    if (e != cudaSuccess) return cuda_failed("cudaGraphInstantiate", e);
    for (int replay = 0; replay < replays; ++replay) {
      e = cudaMemsetAsync(y.get(), 0xff, y.bytes(), stream);
      if (e == cudaSuccess) e = cudaGraphLaunch(exec, stream);
      if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
      if (e != cudaSuccess) return cuda_failed("graph replay", e);
      if (!check(replay)) return false;
    }
    return true;
  }();
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  if (stream != nullptr) cudaStreamDestroy(stream);
  return ok;
}

// One plan of c run on the shared inputs, checked.
GemmCheckResult run_prepared(const GemmCase& c, SharedInputs& in) {
  const QuantizedWeight& w = c.weight;
  const Context& context = *in.context;
  Plan plan;
  const Problem problem = Problem::for_weight(in.storage.view(), c.m, c.dtype, c.bias);
  if (Status st = c.planner ? c.planner(problem, in.storage.view(), context, &plan)
                            : sailfish::plan(problem, -1, c.options, &plan);
      !st.ok()) {
    return failure("plan", st);
  }

  // Y is followed by a guard of kGuardRows poisoned rows that no run may write.
  const size_t y_elements = static_cast<size_t>(c.m * w.n);
  const size_t guard_elements = static_cast<size_t>(kGuardRows * w.n);
  DeviceBuffer d_a, d_bias, d_y((y_elements + guard_elements) * 2), d_ws;
  if (!d_a.upload(in.a_bits) || (c.bias && !d_bias.upload(in.bias_bits)) ||
      !d_ws.allocate(workspace_size(plan))) {
    return failure("device allocation", cudaGetLastError());
  }
  // Poison: 0xffff is a NaN in fp16 and bf16, so any element the kernel leaves unwritten shows.
  // The workspace too: fresh device memory often reads as zero, and run() may not rely on it.
  auto poison = [&]() {
    cudaError_t e = cudaMemset(d_y.get(), 0xff, d_y.bytes());
    if (e == cudaSuccess && d_ws.bytes() > 0) e = cudaMemset(d_ws.get(), 0xff, d_ws.bytes());
    return e;
  };
  // Y's elements (of `y`, else d_y), after checking the guard past them is still poison.
  auto download_y = [&](std::vector<uint16_t>* out,
                        const DeviceBuffer* y = nullptr) -> std::string {
    std::vector<uint16_t> all = (y != nullptr ? *y : d_y).download<uint16_t>();
    const auto written = std::count_if(all.begin() + static_cast<std::ptrdiff_t>(y_elements),
                                       all.end(), [](uint16_t v) { return v != 0xffff; });
    all.resize(y_elements);
    *out = std::move(all);
    if (written == 0) return "";
    std::ostringstream m;
    m << written << " of the " << guard_elements << " elements past Y ([m=" << c.m << "][n=" << w.n
      << "]) were written";
    return m.str();
  };
  cudaError_t err = poison();
  if (err != cudaSuccess) return failure("poison", err);

  RunArgs args;
  args.a = d_a.get();
  args.bias = c.bias ? d_bias.get() : nullptr;
  args.y = d_y.get();
  args.weight = &in.storage.view();
  if (Status st = run(plan, args, d_ws.get(), d_ws.bytes(), context, nullptr); !st.ok()) {
    return failure("run", st);
  }
  err = cudaDeviceSynchronize();
  if (err != cudaSuccess) return failure("kernel execution", err);
  std::vector<uint16_t> y_bits;
  if (std::string past = download_y(&y_bits); !past.empty()) {
    GemmCheckResult r;
    r.message = "run: " + past;
    return r;
  }
  bool bitwise_stable = true;
  for (int rep = 1; rep < c.repeats; ++rep) {
    err = poison();
    if (err != cudaSuccess) return failure("poison", err);
    if (Status st = run(plan, args, d_ws.get(), d_ws.bytes(), context, nullptr); !st.ok()) {
      return failure("run (repeat)", st);
    }
    err = cudaDeviceSynchronize();
    if (err != cudaSuccess) return failure("kernel execution (repeat)", err);
    std::vector<uint16_t> again;
    if (std::string past = download_y(&again); !past.empty()) {
      GemmCheckResult r;
      r.message = "run (repeat): " + past;
      return r;
    }
    bitwise_stable &= again == y_bits;
  }
  if (c.graph_replays > 0) {
    std::string replay_failure;
    if (!replay_in_graph(c.graph_replays, d_y, [&](cudaStream_t stream) {
          return run(plan, args, d_ws.get(), d_ws.bytes(), context, stream);
        }, [&](int replay) {
          std::vector<uint16_t> again;
          if (std::string past = download_y(&again); !past.empty()) {
            replay_failure = "graph replay " + std::to_string(replay) + ": " + past;
            return false;
          }
          bitwise_stable &= again == y_bits;
          return true;
        }, &replay_failure)) {
      GemmCheckResult r;
      r.message = replay_failure;
      return r;
    }
  }
  if (c.back_to_back > 0) {
    std::vector<DeviceBuffer> ys(static_cast<size_t>(c.back_to_back));
    for (DeviceBuffer& y : ys) {
      if (!y.allocate(d_y.bytes())) return failure("device allocation", cudaGetLastError());
      err = cudaMemset(y.get(), 0xff, y.bytes());
      if (err != cudaSuccess) return failure("poison", err);
    }
    err = cudaDeviceSynchronize();
    if (err != cudaSuccess) return failure("poison", err);
    for (DeviceBuffer& y : ys) {
      RunArgs chained = args;
      chained.y = y.get();
      if (Status st = run(plan, chained, d_ws.get(), d_ws.bytes(), context, nullptr); !st.ok()) {
        return failure("run (back to back)", st);
      }
    }
    err = cudaDeviceSynchronize();
    if (err != cudaSuccess) return failure("kernel execution (back to back)", err);
    for (size_t i = 0; i < ys.size(); ++i) {
      std::vector<uint16_t> again;
      if (std::string past = download_y(&again, &ys[i]); !past.empty()) {
        GemmCheckResult r;
        r.message = "back-to-back run " + std::to_string(i) + ": " + past;
        return r;
      }
      bitwise_stable &= again == y_bits;
    }
  }
  // The inputs are read-only.
  if (d_a.download<uint16_t>() != in.a_bits ||
      (c.bias && d_bias.download<uint16_t>() != in.bias_bits)) {
    GemmCheckResult r;
    r.message = "run wrote into its activations or bias";
    return r;
  }

  GemmCheckResult r;
  r.tier = plan.tier;
  r.bitwise_stable = bitwise_stable;
  const ErrorSummary errors = compare_to_reference(y_bits, in.reference, in.plain, c.dtype);
  r.max_error = errors.max_error;
  r.plain_error = errors.plain_error;
  const double ref_max = errors.ref_max;
  const int64_t unwritten = errors.unwritten, worst = errors.worst;
  const double ulp = c.dtype == DType::kBF16 ? 1.0 / 128 : 1.0 / 1024;
  double atol = errors.atol;
  r.splits = plan.tier == Tier::kDecode    ? plan.decode.splits
             : plan.tier == Tier::kPrefill ? plan.prefill.splits
                                           : 1;
  r.tokens = plan.tier == Tier::kPrefill ? plan.prefill.tokens : 0;
  r.decode_epilogue = plan.tier == Tier::kDecode ? plan.decode.epilogue : -1;
  r.warp_stages = plan.tier == Tier::kDecode ? plan.decode.warp_stages : 0;
  r.warp_split = plan.tier == Tier::kDecode && plan.decode.warp_split;
  r.copied_activations = plan.tier == Tier::kDecode && plan.decode.copy_activations;
  r.stream_k_strips = plan.tier == Tier::kDecode ? plan.decode.stream_k_strips : 0;
  r.prefill_stream_k = plan.tier == Tier::kPrefill && plan.prefill.stream_k;
  r.prefill_grid = plan.tier == Tier::kPrefill ? plan.prefill.grid : 0;
  r.cluster_push = plan.tier == Tier::kDecode && plan.decode.cluster_push;
  r.spread_ctas = plan.tier == Tier::kDecode ? plan.decode.spread_ctas : 0;
  r.warps = plan.tier == Tier::kDecode ? plan.decode.warps : 0;
  r.workspace_bytes = workspace_size(plan);
  r.output_bits = y_bits;
  if (c.allow_split_rounding) atol += 0.5 * ulp * ref_max * r.splits;
  std::ostringstream msg;
  msg << "tier " << tier_name(plan.tier) << " splits=" << r.splits << " m=" << c.m << " n=" << w.n << " k=" << w.k
      << " bits=" << w.bits << " group=" << w.group_size << " zero="
      << zero_point_kind_name(w.zero_kind) << " act_order=" << !w.g_idx.empty()
      << " bias=" << c.bias << " dtype=" << dtype_name(c.dtype) << ": max error " << r.max_error
      << " (plain " << r.plain_error << ", atol " << atol << ", max |ref| " << ref_max << ")";
  if (unwritten > 0) {
    msg << "; " << unwritten << " output elements unwritten (still NaN)";
  } else if (r.max_error > 2 * r.plain_error + atol) {
    msg << "; worst at row " << worst / w.n << " col " << worst % w.n;
  } else {
    r.ok = true;
  }
  r.message = msg.str();
  return r;
}

}  // namespace

GemmCheckResult run_and_check(const GemmCase& c, uint64_t seed) {
  return run_and_check_variants(c, {c.options}, seed).front();
}

std::vector<GemmCheckResult> run_and_check_variants(const GemmCase& base,
                                                    const std::vector<Options>& variants,
                                                    uint64_t seed) {
  std::vector<GemmCheckResult> results;
  if (variants.empty()) {
    GemmCheckResult r;
    r.message = "run_and_check_variants: no variant given";
    results.push_back(r);
    return results;
  }
  SharedInputs in;
  if (GemmCheckResult prepared = prepare(base, seed, &in); !prepared.ok) {
    results.assign(variants.size(), prepared);
    return results;
  }
  GemmCase c = base;
  for (const Options& options : variants) {
    c.options = options;
    results.push_back(run_prepared(c, in));
  }
  return results;
}

ErrorSummary compare_to_reference(const std::vector<uint16_t>& y_bits,
                                  const std::vector<double>& reference,
                                  const std::vector<double>& plain, DType dtype) {
  ErrorSummary s;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double y = bits_to_float(y_bits[i], dtype);
    if (std::isnan(y)) {
      ++s.unwritten;
      continue;
    }
    const double e = std::abs(y - reference[i]);
    if (e > s.max_error) s.max_error = e, s.worst = static_cast<int64_t>(i);
    s.plain_error = std::max(s.plain_error, std::abs(plain[i] - reference[i]));
    s.ref_max = std::max(s.ref_max, std::abs(reference[i]));
  }
  const double ulp = dtype == DType::kBF16 ? 1.0 / 128 : 1.0 / 1024;
  s.atol = 1e-6 + 0.25 * ulp * s.ref_max;
  return s;
}

RandomWeightSpec format_spec(const WeightFormat& f, int64_t n, int64_t k, int group_size,
                             bool act_order, DType dtype) {
  RandomWeightSpec spec;
  spec.n = n;
  spec.k = k;
  spec.bits = f.bits;
  spec.group_size = group_size;
  spec.zero_kind = f.zero;
  spec.act_order = act_order;
  spec.scale_dtype = dtype;
  return spec;
}

GemmCase gemm_case(QuantizedWeight w, DType dtype, int64_t m, bool bias, const Options& options) {
  GemmCase c;
  c.weight = std::move(w);
  c.dtype = dtype;
  c.m = m;
  c.bias = bias;
  c.options = options;
  return c;
}

void check_odd_shapes(uint64_t seed, int64_t m, const Options& options) {
  std::mt19937_64 rng(seed);
  for (const auto& shape : kOddShapes) {
    for (int bits : {4, 8}) {
      RandomWeightSpec spec;
      spec.n = shape[0];
      spec.k = shape[1];
      spec.bits = bits;
      spec.group_size = 32;
      const GemmCase c = gemm_case(random_weight(rng, spec), DType::kBF16, m, true, options);
      const auto r = run_and_check(c, rng());
      EXPECT_TRUE(r.ok) << "n " << shape[0] << ", k " << shape[1] << ", int" << bits << ": "
                        << r.message;
    }
  }
}

Tier checked_tier(GemmCase c, int64_t m, uint64_t seed) {
  c.m = m;
  const GemmCheckResult r = run_and_check(c, seed);
  EXPECT_TRUE(r.ok) << "m = " << m << ": " << r.message;
  return r.tier;
}

}  // namespace sailfish::testing
