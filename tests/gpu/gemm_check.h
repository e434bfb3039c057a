// One GEMM through the public API, checked against the float64 reference: the harness every GPU
// tier test uses.
//
// Tolerance (STYLE.md, after FlashAttention-3): the kernel's max error against float64 must be at
// most 2x the max error of a plain same-precision implementation, plus a small atol. The plain
// implementation rounds the dequantized weight, the activations and the output to the activation
// type once each and accumulates in float32, which is what any correct fp16/bf16 kernel does.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sailfish/sailfish.h"
#include "test_helpers.h"

namespace sailfish::testing {

// The weight formats Sailfish serves, as (bits, zero kind): u4b8 (GPTQ), u4 with integer zero
// points (AWQ, MatMulNBits packed uint8), u4 with float zero points (MatMulNBits typed), and the
// same three at 8 bits. Every tier test iterates this table.
struct WeightFormat {
  const char* name;
  int bits;
  ZeroPointKind zero;
};
inline constexpr WeightFormat kWeightFormats[] = {
    {"u4b8", 4, ZeroPointKind::kNone},     {"u4_zp", 4, ZeroPointKind::kInteger},
    {"u4_fzp", 4, ZeroPointKind::kFloat},  {"u8b128", 8, ZeroPointKind::kNone},
    {"u8_zp", 8, ZeroPointKind::kInteger}, {"u8_fzp", 8, ZeroPointKind::kFloat},
};
inline constexpr int kWeightFormatCount = sizeof(kWeightFormats) / sizeof(kWeightFormats[0]);
// The activation type a test pairs with format kWeightFormats[format_index]: bf16 and fp16 in turn
// down the table, so a loop over the formats covers both types.
constexpr DType format_test_dtype(int format_index) {
  return format_index % 2 == 0 ? DType::kBF16 : DType::kF16;
}

struct GemmCase {
  QuantizedWeight weight;
  DType dtype = DType::kBF16;
  int64_t m = 1;
  bool bias = false;
  Options options;
  int repeats = 1;  // > 1: run again on a re-poisoned output and compare the bits
  // > 0: then capture one run() in a CUDA graph and replay it this many times, Y re-poisoned
  // before each replay and the workspace left as the last replay left it (as a served model's
  // graph does), each replay's bits compared with the first run's. Replays share everything
  // captured, so this is what catches state a run must leave as it found it, and a graph's
  // programmatic-dependent-launch edges between a call's kernels.
  int graph_replays = 0;
  // > 0: then this many runs enqueued back to back on one stream with no synchronization between
  // them, sharing the workspace, each into a Y of its own (poisoned first), each compared with the
  // first run's bits. Under programmatic dependent launch a run's kernels then overlap the one
  // before's, which is what catches a run reading workspace the next one already overwrites (a
  // split grid's partials, read by its reduce while the next call's main kernel starts).
  int back_to_back = 0;
  // The red.global epilogue rounds each split's partial sum to 16 bits: allow half an output ulp
  // (at the largest magnitude) per split on top of the rule.
  bool allow_split_rounding = false;
  // Makes the plan instead of plan(problem, -1, options) (the tune() tests), given the uploaded
  // weight and the context run() will use.
  std::function<Status(const Problem&, const DeviceWeight&, const Context&, Plan*)> planner;
};

struct GemmCheckResult {
  bool ok = false;
  std::string message;     // what failed, with the figures
  double max_error = 0;    // kernel vs float64
  double plain_error = 0;  // plain same-precision implementation vs float64
  Tier tier = Tier::kAuto;
  bool bitwise_stable = true;  // every repeat produced the same bits
  int splits = 1;              // split-K depth the plan chose
  int tokens = 0;              // prefill tier: the token width (wgmma N) the plan chose
  int decode_epilogue = -1;    // decode tier: the split epilogue the plan chose (DecodePlan)
  int warp_stages = 0;         // decode tier: the warp-split kernel's stages per warp
  bool warp_split = false;     // decode tier: the warp-split kernel (DecodePlan::warp_split)
  bool copied_activations = false;  // decode tier: the prep kernel copied A (zero-padded)
  int stream_k_strips = 0;     // decode tier: Stream-K strips per cluster (0: split grid)
  bool prefill_stream_k = false;  // prefill tier: the Stream-K grid (stream_k.h)
  int prefill_grid = 0;        // prefill tier: persistent CTAs
  bool cluster_push = false;   // decode tier: the cluster epilogue's push form
  int spread_ctas = 0;         // decode tier: DecodePlan::spread_ctas (shared memory padded)
  int warps = 0;               // decode tier: DecodePlan::warps (warp-split kernel's CTA)
  size_t workspace_bytes = 0;  // workspace_size(plan)
  std::vector<uint16_t> output_bits;  // Y of the first run, as stored
};

// The weight spec of format f at n x k.
RandomWeightSpec format_spec(const WeightFormat& f, int64_t n, int64_t k, int group_size,
                             bool act_order, DType dtype);

// A case: weight w at M = m, activations (and scales) of dtype, with or without a bias.
GemmCase gemm_case(QuantizedWeight w, DType dtype, int64_t m, bool bias, const Options& options);

// Router GEMVs and sharded layers every tier must serve: tiny N, and K and N that are not
// multiples of 64, as {n, k}.
inline constexpr int64_t kOddShapes[][2] = {
    {8, 4096}, {32, 2880}, {10944, 512}, {96, 7392}, {129, 8256}};

// Every odd shape at both bit widths (group 32, bf16, bias) at M = m under options, checked;
// a failed check is a test failure naming the shape.
void check_odd_shapes(uint64_t seed, int64_t m, const Options& options);

// A kernel's output (16-bit values of dtype, as stored) against the float64 reference and a plain
// same-precision implementation: the error rule above. atol is a quarter of one output ulp at the
// largest reference magnitude (bf16 carries 8 significant bits, fp16 11), so a kernel is never
// failed for one rounding the plain implementation happened to get right.
struct ErrorSummary {
  double max_error = 0;    // kernel vs float64, over the written elements
  double plain_error = 0;  // plain implementation vs float64
  double ref_max = 0;      // largest |reference|
  double atol = 0;
  int64_t unwritten = 0;   // elements still NaN (the poison)
  int64_t worst = -1;      // index of max_error
};
// The plain same-precision implementation the rule compares with: weight, activations and output
// rounded to dtype once each, float32 accumulation. a: [m][w.k]; bias: [w.n] or empty.
std::vector<double> plain_implementation(const std::vector<double>& a, int64_t m,
                                         const QuantizedWeight& w, const std::vector<double>& bias,
                                         DType dtype);
ErrorSummary compare_to_reference(const std::vector<uint16_t>& y_bits,
                                  const std::vector<double>& reference,
                                  const std::vector<double>& plain, DType dtype);

// Packs on the host, uploads, plans, runs once on a poisoned output and compares. seed draws
// activations and bias.
GemmCheckResult run_and_check(const GemmCase& c, uint64_t seed);

// c run once per entry of variants (c's options replaced by it) on the same activations, bias and
// uploaded weight, each on a freshly poisoned output and workspace, each checked against one
// float64 reference and plain implementation: the form for tests that compare plans bit for bit,
// which would otherwise recompute the host references (the slow part on the larger shapes) per
// plan. One result per variant, in order; a failure before any run is every variant's result.
std::vector<GemmCheckResult> run_and_check_variants(const GemmCase& c,
                                                    const std::vector<Options>& variants,
                                                    uint64_t seed);

// The tier plan() picks for c at M = m; the product is also checked, and a failed check is a test
// failure. For the auto-dispatch tests.
Tier checked_tier(GemmCase c, int64_t m, uint64_t seed);

}  // namespace sailfish::testing
