// sailfish_moe_bench: MoE expert GEMMs (plan_moe / run_moe, docs/MOE.md) on public models' layer
// shapes, timed as DESIGN.md says: cold weights (expert sets rotated over enough copies to exceed
// 3x the L2), CUDA graphs of many calls, the median of timed replays. Beside each row, the floor:
// the floor kernel streaming the bytes of the experts the routing touches (bench/stream_read.h),
// launched the same way; and the roofline, those bytes over the streaming-read bandwidth measured
// in the same run. Routing is drawn uniformly (distinct experts per token) from a fixed seed.
//
//   sailfish_moe_bench [--tokens 1,8,64] [--layers qwen3-30b-a3b,mixtral-8x7b] [--int8]
//                      [--launches 20] [--replays 15] [--baseline] [--cublas]
//
// --baseline also times, in the same run and graphs, the layer as v1 ran it (four launches, no
// programmatic dependent launch: MoeOptions::fuse and programmatic_dependent_launch off), with
// the launches overlapped but unfused (fuse off, v2's first step), and fused with the align
// launch kept (self_align off, v2), so each step's gain is measured side by side: three rounds in
// alternating order, each variant's median.
//
// --cublas also times the same expert GEMMs unquantized, bf16 weights in one cuBLAS grouped GEMM
// (moe/cublas_experts.h), on cold weights in the same graphs: "x cuBLAS" is its time over ours.
// A row where cuBLAS cannot run shows "-" and says why on stderr; our figures stand.
//
// Before a row is timed its output is checked (moe/moe_check.h): the plan run once into a poisoned
// output, every element scanned for NaN/Inf, 24 elements against float64 sums over the expert
// bytes the kernels read; with --cublas the baseline's output too (4 elements a touched expert).
// The "check" column says "ok" or "FAIL" and how many elements were compared; a failure's first
// element goes to stderr.
//
// Exit status: 0 every row ran and passed its checks; 1 an error or a failed check; 2 no CUDA
// device.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "device_buffer.h"
#include "graph_timer.h"
#include "moe/cublas_experts.h"
#include "moe/moe_check.h"
#include "moe/moe_layers.h"
#include "moe/moe_rotation.h"
#include "random_fill.h"
#include "read_bandwidth.h"
#include "sailfish/moe_gpu.h"
#include "stream_read.h"

namespace sailfish::bench {
namespace {

struct Args {
  std::vector<int64_t> tokens = {1, 8, 64};
  std::vector<std::string> layers = {"qwen3-30b-a3b", "mixtral-8x7b", "deepseek-v3"};
  int bits = 4;
  int launches = 20, replays = 15;
  bool baseline = false;
  bool cublas = false;
  int64_t l2_bytes = 0;  // the device's, queried in main_impl: the basis of the cold copies
};

// The rotated copies together exceed this many times the L2 (docs/BENCH.md, as sailfish_bench).
constexpr double kColdFactor = 3.0;
// Device memory left alone when sizing the copies: activations, outputs, workspaces, cuBLAS.
constexpr size_t kMemoryMargin = size_t(2) << 30;
// Output elements checked against float64 per row before it is timed (moe/moe_check.h), and per
// touched expert of the cuBLAS baseline (CublasExperts::check).
constexpr int kCheckSamples = 24;
constexpr int kCublasCheckSamples = 4;

Status memory_budget(size_t* budget) {
  size_t free_bytes = 0, total_bytes = 0;
  SF_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  *budget = free_bytes > kMemoryMargin ? free_bytes - kMemoryMargin : 0;
  return Status();
}

void note_short_rotation(const char* what, const MoeLayer& layer, bool gate_up, int64_t tokens,
                         const MoeRotation& r) {
  if (r.copies >= r.wanted) return;
  std::fprintf(stderr, "%s, %s %s tokens %lld: memory allows only %d of %d cold copies\n", what,
               layer.name, gate_up ? "gate_up" : "down", static_cast<long long>(tokens), r.copies,
               r.wanted);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}

bool parse(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--tokens" && has_value) {
      a->tokens.clear();
      for (const std::string& t : split(argv[++i])) a->tokens.push_back(std::atoll(t.c_str()));
    } else if (arg == "--layers" && has_value) {
      a->layers = split(argv[++i]);
    } else if (arg == "--int8") {
      a->bits = 8;
    } else if (arg == "--baseline") {
      a->baseline = true;
    } else if (arg == "--cublas") {
      a->cublas = true;
    } else if (arg == "--launches" && has_value) {
      a->launches = std::atoi(argv[++i]);
    } else if (arg == "--replays" && has_value) {
      a->replays = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "unknown or incomplete argument '%s' (see the file's header)\n",
                   arg.c_str());
      return false;
    }
  }
  for (int64_t t : a->tokens) {
    if (t < 1) return std::fprintf(stderr, "--tokens takes positive counts\n"), false;
  }
  if (a->launches < 1 || a->replays < 1) {
    return std::fprintf(stderr, "--launches and --replays take positive counts\n"), false;
  }
  return true;
}

// Random experts straight on the device: codes, scales (small, so sums stay finite), no zero
// points. `copies` expert sets back to back for the cold-weight rotation.
struct ExpertCopies {
  DeviceBuffer buffer;
  std::vector<DeviceExperts> views;
};

Status make_experts(const PackedGeometry& g, int experts, int copies, DType dtype, uint64_t seed,
                    cudaStream_t stream, ExpertCopies* out) {
  const size_t codes = static_cast<size_t>(g.code_bytes()) * experts;
  const size_t scales = static_cast<size_t>(g.scale_rows * g.n_pad) * 2 * experts;
  const size_t set = moe_set_stride_bytes(g, experts);
  SF_RETURN_IF_ERROR(out->buffer.allocate(set * copies));
  out->views.clear();
  for (int c = 0; c < copies; ++c) {
    char* base = out->buffer.as<char>() + c * set;
    SF_RETURN_IF_ERROR(fill_random_bytes(base, codes, derive_seed(seed, c, 1), stream));
    SF_RETURN_IF_ERROR(fill_random_values(base + codes, static_cast<int64_t>(scales / 2), dtype,
                                          0.01f, derive_seed(seed, c, 2), stream));
    DeviceExperts v;
    v.geometry = g;
    v.experts = experts;
    v.scale_dtype = dtype;
    v.zero_kind = ZeroPointKind::kNone;
    v.codes = base;
    v.scales = base + codes;
    out->views.push_back(v);
  }
  return Status();
}

struct Row {
  std::string layer, projection;
  int64_t tokens = 0;
  int touched = 0;  // distinct experts the routing picked
  // Weight passes: the blocks this routing fills at the plan's block rows, over `touched`; each
  // block streams its expert's weight, the floor streams each touched expert once.
  double passes = 0;
  double cublas_us = 0;  // --cublas: the grouped bf16 GEMM's time, 0 where it could not run
  double us = 0, floor_us = 0, roof_us = 0;
  // --baseline: self-align off (v2); fuse off; fuse and PDL off (v1)
  double aligned_us = 0, unfused_us = 0, v1_us = 0;
  std::string plan;
  CheckResult check;         // ours, before timing
  CheckResult cublas_check;  // --cublas: the baseline's, before timing
};

// The same expert GEMMs in bf16 through cuBLAS (CublasExperts): one row a choice, each expert's
// rows contiguous; weight sets (the touched experts only) rotated over enough copies that the
// bytes read between two uses of a copy exceed 3x the L2, whole rotations a graph.
Status time_cublas(const MoeLayer& layer, bool gate_up, int64_t tokens, const PackedGeometry& g,
                   const std::vector<int32_t>& ids, const Args& args, uint64_t seed,
                   cudaStream_t stream, double* us, CheckResult* check) {
  std::vector<int> rows(static_cast<size_t>(layer.experts), 0);
  for (const int32_t e : ids) ++rows[static_cast<size_t>(e)];
  int touched = 0;
  for (const int r : rows) touched += r > 0 ? 1 : 0;
  const size_t set_bytes = static_cast<size_t>(g.n * g.k) * 2 * static_cast<size_t>(touched);
  size_t budget = 0;
  SF_RETURN_IF_ERROR(memory_budget(&budget));
  const MoeRotation rotation =
      moe_rotation(set_bytes, set_bytes, args.l2_bytes, kColdFactor, budget, args.launches);
  note_short_rotation("cuBLAS baseline", layer, gate_up, tokens, rotation);
  const int copies = rotation.copies;
  std::unique_ptr<CublasExperts> cublas;
  SF_RETURN_IF_ERROR(
      CublasExperts::create(rows, g.n, g.k, copies, derive_seed(seed, 4), stream, &cublas));
  SF_RETURN_IF_ERROR(cublas->check(0, kCublasCheckSamples, derive_seed(seed, 5), stream, check));
  GraphTiming timing;
  SF_RETURN_IF_ERROR(time_in_graph(
      rotation.launches, 2, args.replays, stream,
      [&](int launch, cudaStream_t s) { return cublas->enqueue(launch % copies, s); }, &timing));
  *us = timing.us_per_call;
  return Status();
}

Status run_row(const MoeLayer& layer, bool gate_up, int64_t tokens, const Args& args,
               const StreamReader& reader, double read_tbps, cudaStream_t stream, Row* row) {
  const DType dtype = DType::kBF16;
  PackedGeometry g;
  SF_RETURN_IF_ERROR(
      gate_up ? PackedGeometry::make(2 * layer.intermediate, layer.hidden, args.bits, 128, &g)
              : PackedGeometry::make(layer.hidden, layer.intermediate, args.bits, 128, &g));
  const uint64_t seed = derive_seed(0x5EED, static_cast<uint64_t>(layer.experts), tokens, gate_up);
  // Routing: distinct experts per token, uniform.
  std::mt19937_64 rng(seed);
  std::vector<int32_t> ids;
  std::vector<float> weights;
  std::set<int32_t> touched;
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<int32_t> order(static_cast<size_t>(layer.experts));
    for (int e = 0; e < layer.experts; ++e) order[static_cast<size_t>(e)] = e;
    std::shuffle(order.begin(), order.end(), rng);
    for (int j = 0; j < layer.top_k; ++j) {
      ids.push_back(order[static_cast<size_t>(j)]);
      touched.insert(order[static_cast<size_t>(j)]);
      weights.push_back(1.0f / layer.top_k);
    }
  }
  // Cold weights: whole expert sets, as many as it takes for the experts a call reads (the
  // touched ones, not the whole set) to exceed 3x the L2 between two uses of a copy.
  const size_t touched_bytes = touched.size() * moe_expert_bytes(g);
  size_t budget = 0;
  SF_RETURN_IF_ERROR(memory_budget(&budget));
  const MoeRotation rotation =
      moe_rotation(touched_bytes, moe_set_stride_bytes(g, layer.experts), args.l2_bytes,
                   kColdFactor, budget, args.launches);
  note_short_rotation("sailfish", layer, gate_up, tokens, rotation);
  const int copies = rotation.copies;
  ExpertCopies experts;
  SF_RETURN_IF_ERROR(make_experts(g, layer.experts, copies, dtype, seed, stream, &experts));

  const MoeGemm gemm = gate_up ? MoeGemm{MoeInput::kToken, MoeOutput::kChoice, false}
                               : MoeGemm{MoeInput::kChoice, MoeOutput::kTokenSum, true};
  const MoeProblem problem = MoeProblem::for_experts(experts.views[0], tokens, layer.top_k,
                                                     layer.experts, gemm, dtype, false);
  MoePlan plan, aligned, unfused, v1;
  SF_RETURN_IF_ERROR(plan_moe(problem, -1, MoeOptions{}, &plan));
  MoeOptions aligned_options;
  aligned_options.self_align = false;
  SF_RETURN_IF_ERROR(plan_moe(problem, -1, aligned_options, &aligned));
  MoeOptions unfused_options;
  unfused_options.fuse = false;
  SF_RETURN_IF_ERROR(plan_moe(problem, -1, unfused_options, &unfused));
  unfused_options.programmatic_dependent_launch = false;
  SF_RETURN_IF_ERROR(plan_moe(problem, -1, unfused_options, &v1));
  const int64_t in_rows = gemm.input_rows(MoeRouting{tokens, layer.top_k, layer.experts});
  const int64_t out_rows = gemm.output_rows(MoeRouting{tokens, layer.top_k, layer.experts});
  DeviceBuffer d_ids, d_weights, d_a, d_y, d_ws;
  SF_RETURN_IF_ERROR(d_ids.allocate(ids.size() * 4));
  SF_RETURN_IF_ERROR(d_weights.allocate(weights.size() * 4));
  SF_RETURN_IF_ERROR(d_a.allocate(static_cast<size_t>(in_rows * g.k) * 2));
  SF_RETURN_IF_ERROR(d_y.allocate(static_cast<size_t>(out_rows * g.n) * 2));
  SF_RETURN_IF_ERROR(
      d_ws.allocate(std::max<size_t>({plan.workspace_bytes, aligned.workspace_bytes,
                                      unfused.workspace_bytes, v1.workspace_bytes, 256})));
  SF_CUDA_CHECK(cudaMemcpy(d_ids.get(), ids.data(), ids.size() * 4, cudaMemcpyHostToDevice));
  SF_CUDA_CHECK(
      cudaMemcpy(d_weights.get(), weights.data(), weights.size() * 4, cudaMemcpyHostToDevice));
  SF_RETURN_IF_ERROR(
      fill_random_values(d_a.get(), in_rows * g.k, dtype, 1.0f, derive_seed(seed, 3), stream));
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));

  MoeRunArgs run;
  run.routing.tokens = tokens;
  run.routing.top_k = layer.top_k;
  run.routing.experts = layer.experts;
  run.routing.local_experts = layer.experts;
  run.routing.topk_ids = d_ids.as<int32_t>();
  run.routing.topk_weights = d_weights.as<float>();
  run.a = d_a.get();
  run.y = d_y.get();
  // Correctness first, on copy 0 (this call also loads the kernels before any capture).
  run.experts = &experts.views[0];
  const MoeRouting host_routing{tokens, layer.top_k, layer.experts, ids, weights, {}};
  SF_RETURN_IF_ERROR(check_moe(plan, run, host_routing, d_ws.get(), d_ws.bytes(), kCheckSamples,
                               derive_seed(seed, 6), stream, &row->check));
  auto time_plan = [&](const MoePlan& timed, double* us) -> Status {
    GraphTiming timing;
    SF_RETURN_IF_ERROR(time_in_graph(
        rotation.launches, 2, args.replays, stream,
        [&](int launch, cudaStream_t s) {
          run.experts = &experts.views[static_cast<size_t>(launch % copies)];
          return run_moe(timed, run, d_ws.get(), d_ws.bytes(), s);
        },
        &timing));
    *us = timing.us_per_call;
    return Status();
  };
  if (!args.baseline) {
    SF_RETURN_IF_ERROR(time_plan(plan, &row->us));
  } else {
    // Rounds in alternating order, each variant's median: on the large rows the variant timed
    // first ran up to 15% faster than the same plan timed after it (the first --baseline run,
    // docs/perf/moe.md v3), so no variant may always go first.
    const std::pair<const MoePlan*, double*> variants[] = {{&plan, &row->us},
                                                           {&aligned, &row->aligned_us},
                                                           {&unfused, &row->unfused_us},
                                                           {&v1, &row->v1_us}};
    constexpr int kVariants = 4, kRounds = 3;
    double times[kVariants][kRounds];
    for (int r = 0; r < kRounds; ++r) {
      for (int i = 0; i < kVariants; ++i) {
        const int v = r % 2 == 0 ? i : kVariants - 1 - i;
        SF_RETURN_IF_ERROR(time_plan(*variants[v].first, &times[v][r]));
      }
    }
    for (int v = 0; v < kVariants; ++v) {
      std::sort(times[v], times[v] + kRounds);
      *variants[v].second = times[v][kRounds / 2];
    }
  }
  // The floor streams as many bytes as the touched experts hold (the first ones of each copy:
  // the same count, one contiguous run) from the same rotation of copies, launched as the plan
  // launches (with programmatic dependent launch unless SAILFISH_PDL=0), the faster of its two
  // load forms, as sailfish_bench's floor since v40 (docs/BENCH.md).
  const size_t floor_bytes = touched_bytes / 16 * 16;
  double floor_us = 0.0;
  for (const FloorLoads loads : kFloorLoadForms) {
    FloorLaunch how;
    how.loads = loads;
    how.programmatic_dependent_launch = plan.gemm.programmatic_dependent_launch;
    GraphTiming floor;
    SF_RETURN_IF_ERROR(time_in_graph(
        rotation.launches, 2, args.replays, stream,
        [&](int launch, cudaStream_t s) {
          return reader.launch(experts.views[static_cast<size_t>(launch % copies)].codes,
                               floor_bytes, s, how);
        },
        &floor));
    if (floor_us == 0.0 || floor.us_per_call < floor_us) floor_us = floor.us_per_call;
  }
  row->layer = layer.name;
  row->projection = gate_up ? "gate_up" : "down";
  row->tokens = tokens;
  row->touched = static_cast<int>(touched.size());
  row->floor_us = floor_us;
  row->roof_us = double(floor_bytes) / (read_tbps * 1e6);
  row->plan = plan.reason;
  MoeAlignment alignment;
  SF_RETURN_IF_ERROR(moe_align(host_routing, plan.block_rows, &alignment));
  row->passes = double(alignment.blocks()) / static_cast<double>(touched.size());
  if (args.cublas) {
    const Status st = time_cublas(layer, gate_up, tokens, g, ids, args, seed, stream,
                                  &row->cublas_us, &row->cublas_check);
    if (!st.ok()) {
      std::fprintf(stderr, "cuBLAS baseline, %s %s tokens %lld: %s\n", layer.name,
                   gate_up ? "gate_up" : "down", static_cast<long long>(tokens),
                   st.to_string().c_str());
      row->cublas_us = 0;
    }
  }
  return Status();
}

int main_impl(int argc, char** argv) {
  Args args;
  if (!parse(argc, argv, &args)) return 1;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device\n");
    return 2;
  }
  int device = 0, l2 = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) != cudaSuccess || l2 <= 0) {
    std::printf("cannot read the L2 size\n");
    return 1;
  }
  args.l2_bytes = l2;
  CudaStream stream;
  StreamReader reader;
  ReadBandwidth bandwidth;
  const Status setup = [&]() -> Status {
    SF_RETURN_IF_ERROR(stream.create());
    SF_RETURN_IF_ERROR(reader.init());
    return measure_read_bandwidth(reader, size_t(4) << 30, 5, 0xB4, stream.get(), &bandwidth);
  }();
  if (!setup.ok()) {
    std::printf("setup: %s\n", setup.to_string().c_str());
    return 1;
  }
  std::printf("streaming read: %.3f TB/s; int%d bf16 group 128, routing uniform\n", bandwidth.tbps,
              args.bits);
  // The columns: us stays the fifth, which scripts/perf/moe_probe.sh reads.
  std::string header = "| layer | proj | tokens | experts hit | us | ";
  if (args.baseline) header += "align kernel us | unfused us | v1 us | v1 / us | ";
  header += "floor us | x floor | % roof | passes | ";
  if (args.cublas) header += "cuBLAS bf16 us | x cuBLAS | ";
  header += "check | plan |";
  const auto columns = std::count(header.begin(), header.end(), '|') - 1;
  std::printf("%s\n|", header.c_str());
  for (int c = 0; c < columns; ++c) std::printf("---|");
  std::printf("\n");
  int failures = 0;
  for (const std::string& name : args.layers) {
    const MoeLayer* layer = nullptr;
    for (const MoeLayer& l : kMoeLayers) {
      if (name == l.name) layer = &l;
    }
    if (layer == nullptr) {
      std::printf("unknown layer '%s'\n", name.c_str());
      return 1;
    }
    for (int64_t tokens : args.tokens) {
      for (bool gate_up : {true, false}) {
        Row row;
        const Status st =
            run_row(*layer, gate_up, tokens, args, reader, bandwidth.tbps, stream.get(), &row);
        if (!st.ok()) {
          std::printf("ERROR %s %s tokens %lld: %s\n", name.c_str(), gate_up ? "gate_up" : "down",
                      static_cast<long long>(tokens), st.to_string().c_str());
          ++failures;
          continue;
        }
        std::printf("| %s | %s | %lld | %d | %.2f | ", row.layer.c_str(), row.projection.c_str(),
                    static_cast<long long>(row.tokens), row.touched, row.us);
        if (args.baseline) {
          std::printf("%.2f | %.2f | %.2f | %.2f | ", row.aligned_us, row.unfused_us, row.v1_us,
                      row.v1_us / row.us);
        }
        std::printf("%.2f | %.2f | %.1f | %.2f | ", row.floor_us, row.us / row.floor_us,
                    100.0 * row.roof_us / row.us, row.passes);
        if (args.cublas) {
          if (row.cublas_us > 0) {
            std::printf("%.2f | %.2f | ", row.cublas_us, row.cublas_us / row.us);
          } else {
            std::printf("- | - | ");
          }
        }
        // A failed check (ours or the baseline's) fails the run; its first failure goes to stderr.
        const bool passed = row.check.passed && row.cublas_check.passed;
        std::printf("%s %d | %s |\n", passed ? "ok" : "FAIL",
                    row.check.samples + row.cublas_check.samples, row.plan.c_str());
        for (const CheckResult* c : {&row.check, &row.cublas_check}) {
          if (c->passed) continue;
          std::fprintf(stderr, "%s %s tokens %lld, %s check: %s\n", name.c_str(),
                       row.projection.c_str(), static_cast<long long>(tokens),
                       c == &row.check ? "sailfish" : "cuBLAS", c->detail.c_str());
          ++failures;
        }
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace sailfish::bench

int main(int argc, char** argv) { return sailfish::bench::main_impl(argc, argv); }
