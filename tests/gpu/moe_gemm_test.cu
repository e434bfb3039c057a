// MoE GEMMs through plan_moe / run_moe against the float64 reference (reference_moe_gemm), on
// random layers: every input and output form, router weights, per-expert bias, expert
// parallelism, every weight format, odd shapes, every block size and several split depths.
// Outputs are poisoned (NaN) before each run, a second run must give the same bits, and the error
// must stay within 2x that of a plain same-precision implementation (gemm_check.h's rule).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gemm_check.h"
#include "gpu_test_helpers.h"
#include "sailfish/moe.h"
#include "sailfish/moe_gpu.h"
#include "sailfish/quantize.h"
#include "sailfish/reference.h"
#include "test_helpers.h"

namespace sailfish {
namespace {

using testing::DeviceBuffer;

struct MoeCase {
  int64_t tokens = 1;
  int top_k = 2, experts = 8;
  bool expert_parallel = false;  // this rank holds every other expert
  int64_t n = 128, k = 256;
  testing::WeightFormat format = testing::kWeightFormats[0];
  int group_size = 128;
  DType dtype = DType::kBF16;
  MoeGemm gemm;
  bool bias = false;
  MoeOptions options;
  int a_misalign = 0;       // A starts this many elements past a 256-byte boundary
  int invalid_choices = 0;  // MoeOutput::kChoice only: this many choices get an id no expert has

  std::string name() const {
    std::ostringstream out;
    out << "tokens " << tokens << ", top " << top_k << " of " << experts
        << (expert_parallel ? " (half local)" : "") << ", " << n << " x " << k << ", "
        << format.name << " group " << group_size << ", " << dtype_name(dtype) << ", input "
        << moe_input_name(gemm.input) << ", output " << moe_output_name(gemm.output)
        << (gemm.apply_router_weights ? ", router weights" : "") << (bias ? ", bias" : "");
    if (options.block_rows) out << ", block " << *options.block_rows;
    if (options.splits) out << ", splits " << *options.splits;
    if (options.fuse) out << (*options.fuse ? ", fused" : ", unfused");
    if (options.self_align) out << (*options.self_align ? ", self-aligned" : ", align kernel");
    if (options.programmatic_dependent_launch) {
      out << (*options.programmatic_dependent_launch ? ", PDL" : ", no PDL");
    }
    if (a_misalign) out << ", A misaligned by " << a_misalign;
    if (invalid_choices) out << ", " << invalid_choices << " invalid choices";
    return out.str();
  }
};

// Values exactly representable in dtype, as bits and as doubles.
void random_values(std::mt19937_64& rng, size_t count, DType dtype, std::vector<uint16_t>* bits,
                   std::vector<double>* values) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  bits->resize(count);
  values->resize(count);
  for (size_t i = 0; i < count; ++i) {
    (*bits)[i] = float_to_bits(unit(rng), dtype);
    (*values)[i] = bits_to_float((*bits)[i], dtype);
  }
}

// The plain same-precision MoE: the dequantized weight and the activations in the activation
// type, float32 products rounded to it, then bias, router weight and the sum over choices in
// float32, rounded once more.
std::vector<double> plain_moe(const MoeRouting& r, const MoeGemm& gemm,
                              const std::vector<QuantizedWeight>& experts,
                              const std::vector<double>& a, const std::vector<double>& bias,
                              DType dtype) {
  const int64_t n = experts[0].n, k = experts[0].k;
  std::vector<std::vector<float>> w(experts.size());
  for (size_t l = 0; l < experts.size(); ++l) {
    w[l].resize(static_cast<size_t>(n * k));
    for (int64_t i = 0; i < n * k; ++i) {
      w[l][static_cast<size_t>(i)] =
          round_to_dtype(static_cast<float>(experts[l].dequantized(i / k, i % k)), dtype);
    }
  }
  std::vector<float> sums(static_cast<size_t>(gemm.output_rows(r) * n), 0.0f);
  for (int64_t row = 0; row < r.choices(); ++row) {
    const int l = r.local_expert(r.topk_ids[static_cast<size_t>(row)]);
    if (l < 0) continue;
    const int64_t source = gemm.input == MoeInput::kToken ? row / r.top_k : row;
    const int64_t target = gemm.output == MoeOutput::kTokenSum ? row / r.top_k : row;
    const float s = gemm.apply_router_weights ? r.topk_weights[static_cast<size_t>(row)] : 1.0f;
    for (int64_t nn = 0; nn < n; ++nn) {
      float dot = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) {
        dot += static_cast<float>(a[static_cast<size_t>(source * k + kk)]) *
               w[static_cast<size_t>(l)][static_cast<size_t>(nn * k + kk)];
      }
      float value = round_to_dtype(dot, dtype);
      if (!bias.empty()) value += static_cast<float>(bias[static_cast<size_t>(l * n + nn)]);
      sums[static_cast<size_t>(target * n + nn)] += s * value;
    }
  }
  std::vector<double> y(sums.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = round_to_dtype(sums[i], dtype);
  return y;
}

// Runs one case end to end; fails the test with the figures where it is wrong. bits: Y's bits,
// if asked for; plan: the plan it ran.
void check_case(const MoeCase& c, uint64_t seed, std::vector<uint16_t>* bits = nullptr,
                MoePlan* ran_plan = nullptr) {
  SCOPED_TRACE(c.name());
  std::mt19937_64 rng(seed);
  MoeRouting r;
  r.tokens = c.tokens;
  r.top_k = c.top_k;
  r.experts = c.experts;
  for (int64_t t = 0; t < c.tokens; ++t) {  // distinct experts per token, as routers pick
    std::vector<int32_t> order(static_cast<size_t>(c.experts));
    for (int e = 0; e < c.experts; ++e) order[static_cast<size_t>(e)] = e;
    std::shuffle(order.begin(), order.end(), rng);
    for (int j = 0; j < c.top_k; ++j) {
      r.topk_ids.push_back(order[static_cast<size_t>(j)]);
      r.topk_weights.push_back(std::uniform_real_distribution<float>(0.05f, 1.0f)(rng));
    }
  }
  if (c.expert_parallel) {
    r.expert_map.assign(static_cast<size_t>(c.experts), -1);
    for (int e = 1, l = 0; e < c.experts; e += 2) r.expert_map[static_cast<size_t>(e)] = l++;
  }
  ASSERT_TRUE(validate(r).ok());
  const int local = r.local_experts();

  std::vector<QuantizedWeight> weights;
  std::vector<PackedWeight> packed(static_cast<size_t>(local));
  for (int l = 0; l < local; ++l) {
    weights.push_back(testing::random_weight(
        rng, testing::format_spec(c.format, c.n, c.k, c.group_size, false, c.dtype)));
    ASSERT_TRUE(pack(weights.back(), c.dtype, &packed[static_cast<size_t>(l)]).ok());
  }
  DeviceExpertsStorage storage;
  const Status uploaded = DeviceExpertsStorage::upload(packed, &storage);
  ASSERT_TRUE(uploaded.ok()) << uploaded.to_string();

  std::vector<uint16_t> a_bits, bias_bits;
  std::vector<double> a, bias;
  random_values(rng, static_cast<size_t>(c.gemm.input_rows(r) * c.k), c.dtype, &a_bits, &a);
  if (c.bias) random_values(rng, static_cast<size_t>(local * c.n), c.dtype, &bias_bits, &bias);

  const MoeProblem problem = MoeProblem::for_experts(storage.view(), c.tokens, c.top_k, c.experts,
                                                     c.gemm, c.dtype, c.bias);
  MoePlan plan;
  const Status planned = plan_moe(problem, -1, c.options, &plan);
  ASSERT_TRUE(planned.ok()) << planned.to_string();
  SCOPED_TRACE(plan.reason);
  if (ran_plan != nullptr) *ran_plan = plan;

  const int64_t out_rows = c.gemm.output_rows(r);
  // Invalid choices (kChoice output): the device sees an id past the experts at every third
  // choice, up to c.invalid_choices of them; their Y rows must come out zero, the others as the
  // reference of the valid routing has them (a kChoice row depends on its own choice only).
  std::vector<int32_t> device_ids = r.topk_ids;
  std::vector<bool> invalid(static_cast<size_t>(r.choices()), false);
  if (c.invalid_choices > 0) {
    ASSERT_EQ(c.gemm.output, MoeOutput::kChoice);
    for (int64_t row = 0, made = 0; row < r.choices() && made < c.invalid_choices; row += 3) {
      device_ids[static_cast<size_t>(row)] = c.experts + 5;
      invalid[static_cast<size_t>(row)] = true;
      ++made;
    }
  }
  std::vector<uint16_t> a_upload(static_cast<size_t>(c.a_misalign), 0);
  a_upload.insert(a_upload.end(), a_bits.begin(), a_bits.end());
  DeviceBuffer d_ids, d_weights, d_map, d_a, d_bias, d_y(static_cast<size_t>(out_rows * c.n) * 2),
      d_ws;
  ASSERT_TRUE(d_ids.upload(device_ids) && d_weights.upload(r.topk_weights) &&
              d_map.upload(r.expert_map) && d_a.upload(a_upload) && d_bias.upload(bias_bits) &&
              d_ws.allocate(plan.workspace_bytes));
  // Stale workspace contents must not matter: poison it too.
  SF_ASSERT_CUDA(cudaMemset(d_ws.get(), 0x7f, d_ws.bytes()));
  MoeRunArgs args;
  args.routing.tokens = c.tokens;
  args.routing.top_k = c.top_k;
  args.routing.experts = c.experts;
  args.routing.local_experts = local;
  args.routing.topk_ids = d_ids.as<int32_t>();
  args.routing.topk_weights = d_weights.as<float>();
  args.routing.expert_map = r.expert_map.empty() ? nullptr : d_map.as<int32_t>();
  args.a = d_a.as<uint16_t>() + c.a_misalign;
  args.bias = c.bias ? d_bias.get() : nullptr;
  args.y = d_y.get();
  args.experts = &storage.view();

  if (plan.fused_gather && c.a_misalign % 8 != 0) {
    // The fused gather reads A in 16-byte chunks: refused with the way out, nothing launched.
    const Status ran = run_moe(plan, args, d_ws.get(), d_ws.bytes(), nullptr);
    EXPECT_EQ(ran.code(), StatusCode::kInvalidArgument) << ran.to_string();
    EXPECT_NE(ran.message().find("16-byte aligned"), std::string::npos) << ran.message();
    EXPECT_NE(ran.message().find("SAILFISH_MOE_FUSE=0"), std::string::npos) << ran.message();
    return;
  }
  std::vector<uint16_t> first;
  for (int run = 0; run < 2; ++run) {
    SF_ASSERT_CUDA(cudaMemset(d_y.get(), 0xff, d_y.bytes()));  // NaN in fp16 and bf16
    const Status ran = run_moe(plan, args, d_ws.get(), d_ws.bytes(), nullptr);
    ASSERT_TRUE(ran.ok()) << ran.to_string();
    SF_ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<uint16_t> y_bits = d_y.download<uint16_t>();
    if (run == 0) {
      first = y_bits;
      if (bits != nullptr) *bits = y_bits;
    } else {
      ASSERT_EQ(y_bits, first) << "a second run gave other bits";
    }
  }

  std::vector<double> ref(static_cast<size_t>(out_rows * c.n));
  const Status referenced =
      reference_moe_gemm(r, c.gemm, weights, a.data(), c.bias ? bias.data() : nullptr, ref.data());
  ASSERT_TRUE(referenced.ok()) << referenced.to_string();
  std::vector<double> plain = plain_moe(r, c.gemm, weights, a, bias, c.dtype);
  for (int64_t row = 0; row < r.choices(); ++row) {
    if (!invalid[static_cast<size_t>(row)]) continue;
    for (int64_t nn = 0; nn < c.n; ++nn) {
      ref[static_cast<size_t>(row * c.n + nn)] = plain[static_cast<size_t>(row * c.n + nn)] = 0.0;
    }
  }
  const testing::ErrorSummary e = testing::compare_to_reference(first, ref, plain, c.dtype);
  EXPECT_EQ(e.unwritten, 0) << "output elements left unwritten (still NaN)";
  EXPECT_LE(e.max_error, 2 * e.plain_error + e.atol)
      << "max error " << e.max_error << " (plain " << e.plain_error << ", atol " << e.atol
      << ") at row " << e.worst / c.n << " column " << e.worst % c.n;
}

MoeCase gate_up(int64_t tokens, int top_k, int experts, int64_t n, int64_t k) {
  MoeCase c;
  c.tokens = tokens;
  c.top_k = top_k;
  c.experts = experts;
  c.n = n;
  c.k = k;
  c.gemm = {MoeInput::kToken, MoeOutput::kChoice, false};
  return c;
}

MoeCase down(int64_t tokens, int top_k, int experts, int64_t n, int64_t k) {
  MoeCase c = gate_up(tokens, top_k, experts, n, k);
  c.gemm = {MoeInput::kChoice, MoeOutput::kTokenSum, true};
  return c;
}

TEST(MoeGemmGpu, DecodeLayersInBothProjections) {
  SF_SKIP_WITHOUT_GPU();
  const uint64_t seed = testing::test_seed();
  check_case(gate_up(1, 4, 16, 256, 512), seed);
  check_case(down(1, 4, 16, 512, 256), seed + 1);
  check_case(gate_up(4, 8, 64, 384, 256), seed + 2);
  check_case(down(4, 8, 64, 256, 384), seed + 3);
  MoeCase biased = down(3, 2, 8, 192, 320);
  biased.bias = true;
  check_case(biased, seed + 4);
}

TEST(MoeGemmGpu, EveryInputAndOutputForm) {
  SF_SKIP_WITHOUT_GPU();
  const uint64_t seed = testing::test_seed() + 10;
  int i = 0;
  for (MoeInput input : {MoeInput::kToken, MoeInput::kChoice}) {
    for (MoeOutput output : {MoeOutput::kChoice, MoeOutput::kTokenSum}) {
      for (bool weighted : {false, true}) {
        MoeCase c = gate_up(5, 3, 12, 128, 192);
        c.gemm = {input, output, weighted};
        c.bias = i % 2 == 1;
        c.dtype = i % 3 == 0 ? DType::kF16 : DType::kBF16;
        check_case(c, seed + i++);
      }
    }
  }
}

TEST(MoeGemmGpu, EveryWeightFormatAndGroupSize) {
  SF_SKIP_WITHOUT_GPU();
  const uint64_t seed = testing::test_seed() + 20;
  int i = 0;
  for (const testing::WeightFormat& format : testing::kWeightFormats) {
    for (int group : {32, 64, 128, kChannelwise}) {
      MoeCase c = down(2, 2, 6, 128, 256);
      c.format = format;
      c.group_size = group;
      c.dtype = i % 2 ? DType::kF16 : DType::kBF16;
      check_case(c, seed + i++);
    }
  }
}

TEST(MoeGemmGpu, ExpertParallelRanksSkipOtherRanksExperts) {
  SF_SKIP_WITHOUT_GPU();
  const uint64_t seed = testing::test_seed() + 40;
  MoeCase c = gate_up(6, 4, 16, 128, 256);
  c.expert_parallel = true;
  check_case(c, seed);
  MoeCase d = down(6, 4, 16, 128, 256);
  d.expert_parallel = true;
  d.bias = true;
  check_case(d, seed + 1);
}

TEST(MoeGemmGpu, OddShapesAreMaskedNotRefused) {
  SF_SKIP_WITHOUT_GPU();
  const uint64_t seed = testing::test_seed() + 50;
  check_case(gate_up(3, 2, 8, 200, 330), seed);   // K not a multiple of 8: scalar gather
  check_case(down(2, 2, 4, 32, 2880), seed + 1);  // a router-sized N
  check_case(gate_up(1, 1, 2, 72, 136), seed + 2);
}

TEST(MoeGemmGpu, EveryBlockSizeAndSplitDepth) {
  SF_SKIP_WITHOUT_GPU();
  const uint64_t seed = testing::test_seed() + 60;
  int i = 0;
  for (int block : kMoeBlockRowChoices) {
    for (int64_t splits : {1, 2, 3, 8}) {
      MoeCase c = down(24, 4, 8, 128, 1024);  // 96 rows over 8 experts: several blocks each
      c.options.block_rows = block;
      c.options.splits = splits;
      c.format = testing::kWeightFormats[i % testing::kWeightFormatCount];
      check_case(c, seed + i++);
    }
  }
}

TEST(MoeGemmGpu, BatchesWithManyRowsAnExpert) {
  SF_SKIP_WITHOUT_GPU();
  const uint64_t seed = testing::test_seed() + 80;
  check_case(gate_up(64, 8, 32, 256, 512), seed);
  check_case(down(128, 2, 8, 512, 256), seed + 1);
}

// v2's fused steps (MoePlan::fused_gather, fused_combine) and the four-launch path they replace,
// each with and without programmatic dependent launch: every form where the plan fuses both, one
// step, or neither, checked against the reference (and the plan's flags, so each path is known
// to have run).
TEST(MoeGemmGpu, FusedAndUnfusedStepsWithAndWithoutPdl) {
  SF_SKIP_WITHOUT_GPU();
  const uint64_t seed = testing::test_seed() + 110;
  int i = 0;
  struct Form {
    MoeCase c;
    bool gather, combine;  // what a fusing plan fuses
  };
  std::vector<Form> forms;
  forms.push_back({gate_up(3, 4, 16, 192, 256), true, true});  // kToken -> kChoice
  MoeCase weighted = gate_up(5, 2, 8, 128, 320);
  weighted.gemm = {MoeInput::kChoice, MoeOutput::kChoice, true};
  weighted.bias = true;
  forms.push_back({weighted, true, true});
  MoeCase single = down(7, 1, 4, 136, 192);  // top 1: the sum over choices is one term
  single.bias = true;
  forms.push_back({single, true, true});
  forms.push_back({down(4, 3, 8, 128, 256), true, false});     // kTokenSum over 3: the combine
  forms.push_back({gate_up(3, 2, 8, 200, 330), false, true});  // K % 8 != 0: the gather kernel
  MoeCase whole = gate_up(40, 4, 4, 128, 200);  // 32-row blocks read whole 64-column blocks
  whole.options.block_rows = 32;
  forms.push_back({whole, false, true});
  MoeCase whole64 = whole;
  whole64.k = 256;
  whole64.dtype = DType::kF16;
  forms.push_back({whole64, true, true});
  MoeCase zeros = gate_up(6, 2, 8, 128, 256);
  zeros.format = testing::kWeightFormats[testing::kWeightFormatCount - 1];
  zeros.options.block_rows = 16;
  forms.push_back({zeros, true, true});
  for (Form& form : forms) {
    for (bool fuse : {true, false}) {
      for (bool pdl : {true, false}) {
        MoeCase c = form.c;
        c.options.fuse = fuse;
        c.options.programmatic_dependent_launch = pdl;
        const MoeProblem problem = [&] {
          MoeProblem p;
          p.tokens = c.tokens;
          p.top_k = c.top_k;
          p.experts = p.local_experts = c.experts;
          EXPECT_TRUE(
              PackedGeometry::make(c.n, c.k, c.format.bits, c.group_size, &p.geometry).ok());
          p.zero_kind = c.format.zero;
          p.scale_dtype = p.act_dtype = c.dtype;
          p.gemm = c.gemm;
          p.has_bias = c.bias;
          return p;
        }();
        MoePlan plan;
        ASSERT_TRUE(plan_moe(problem, -1, c.options, &plan).ok()) << c.name();
        EXPECT_EQ(plan.fused_gather, fuse && form.gather) << c.name();
        EXPECT_EQ(plan.fused_combine, fuse && form.combine) << c.name();
        EXPECT_EQ(plan.gemm.programmatic_dependent_launch, pdl) << c.name();
        check_case(c, seed + i++);
      }
    }
  }
}

// v3's self-aligned GEMM (MoePlan::self_align: no align launch, every CTA ranks the routing) gives
// the bits the align kernel's plan gives, with the fused combine and with the combine kernel
// (whose block experts and choice slots the GEMM then writes), under expert parallelism, with
// invalid choices, at every block size and with split K (asked for: the default rule keeps the
// align launch there).
TEST(MoeGemmGpu, SelfAlignedGemmMatchesTheAlignKernelBitForBit) {
  SF_SKIP_WITHOUT_GPU();
  const uint64_t seed = testing::test_seed() + 150;
  std::vector<MoeCase> cases;
  cases.push_back(gate_up(1, 8, 64, 256, 512));
  cases.push_back(down(1, 8, 64, 512, 256));
  MoeCase biased = down(3, 2, 8, 192, 320);
  biased.bias = true;
  cases.push_back(biased);
  MoeCase single = down(5, 1, 6, 136, 192);
  single.bias = true;
  cases.push_back(single);
  MoeCase ranks = gate_up(6, 4, 16, 128, 256);
  ranks.expert_parallel = true;
  cases.push_back(ranks);
  MoeCase invalid = gate_up(4, 3, 8, 128, 256);
  invalid.invalid_choices = 3;
  cases.push_back(invalid);
  for (int block : kMoeBlockRowChoices) {
    for (int64_t splits : {1, 3}) {
      MoeCase c = down(12, 4, 8, 128, 1024);
      c.options.block_rows = block;
      c.options.splits = splits;
      cases.push_back(c);
    }
  }
  MoeCase zeros = gate_up(6, 2, 8, 128, 256);
  zeros.format = testing::kWeightFormats[1];
  zeros.dtype = DType::kF16;
  cases.push_back(zeros);
  int i = 0;
  for (MoeCase c : cases) {
    std::vector<uint16_t> self_bits, kernel_bits;
    MoePlan self_plan, kernel_plan;
    c.options.self_align = true;
    check_case(c, seed + i, &self_bits, &self_plan);
    c.options.self_align = false;
    check_case(c, seed + i, &kernel_bits, &kernel_plan);
    // Asked for, split grids self-align too (the default rule leaves them out).
    EXPECT_TRUE(self_plan.self_align) << c.name() << ": " << self_plan.reason;
    EXPECT_FALSE(kernel_plan.self_align) << c.name();
    EXPECT_FALSE(self_bits.empty()) << c.name();
    EXPECT_EQ(self_bits, kernel_bits) << c.name() << ": the two plans gave other bits";
    ++i;
  }
}

// The fused combine writes only the rows its blocks hold; the align step zeroes the rest (choices
// whose id no expert has), so no row is left as it was.
TEST(MoeGemmGpu, FusedCombineZeroesTheRowsOfInvalidChoices) {
  SF_SKIP_WITHOUT_GPU();
  const uint64_t seed = testing::test_seed() + 130;
  MoeCase c = gate_up(4, 3, 8, 128, 256);
  c.invalid_choices = 3;
  check_case(c, seed);
  c.gemm.apply_router_weights = true;
  c.bias = true;
  c.options.fuse = false;  // the combine kernel's zeros, for the same rows
  check_case(c, seed + 1);
}

// A fused gather reads A in 16-byte chunks: an A two bytes off is refused with the way out, and
// the unfused plan it names takes the same A.
TEST(MoeGemmGpu, MisalignedActivationsNeedTheUnfusedPlan) {
  SF_SKIP_WITHOUT_GPU();
  const uint64_t seed = testing::test_seed() + 140;
  MoeCase c = gate_up(3, 2, 8, 128, 256);
  c.a_misalign = 1;
  check_case(c, seed);  // the fused plan: refused
  c.options.fuse = false;
  check_case(c, seed + 1);  // the gather kernel's scalar loads
  MoeCase even = down(3, 2, 8, 128, 256);
  even.a_misalign = 8;  // 16 bytes off: aligned, fused
  check_case(even, seed + 2);
}

TEST(MoeGemmGpu, NoTokensWritesNothingAndSucceeds) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 90);
  PackedWeight packed;
  ASSERT_TRUE(pack(testing::random_weight(rng, testing::format_spec(testing::kWeightFormats[0], 64,
                                                                    64, 64, false, DType::kBF16)),
                   DType::kBF16, &packed)
                  .ok());
  DeviceExpertsStorage storage;
  ASSERT_TRUE(DeviceExpertsStorage::upload({packed, packed}, &storage).ok());
  const MoeGemm gemm{MoeInput::kToken, MoeOutput::kChoice, false};
  MoePlan plan;
  ASSERT_TRUE(plan_moe(MoeProblem::for_experts(storage.view(), 0, 1, 2, gemm, DType::kBF16, false),
                       -1, {}, &plan)
                  .ok());
  DeviceBuffer ws(plan.workspace_bytes);
  MoeRunArgs args;
  args.routing.top_k = 1;
  args.routing.experts = 2;
  args.routing.local_experts = 2;
  args.experts = &storage.view();
  const Status ran = run_moe(plan, args, ws.get(), ws.bytes(), nullptr);
  EXPECT_TRUE(ran.ok()) << ran.to_string();
  SF_ASSERT_CUDA(cudaDeviceSynchronize());
}

TEST(MoeGemmGpu, ExpertsRoundTripThroughTheStorage) {
  SF_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(testing::test_seed() + 100);
  for (const testing::WeightFormat& format : testing::kWeightFormats) {
    std::vector<PackedWeight> packed(3);
    for (PackedWeight& p : packed) {
      ASSERT_TRUE(pack(testing::random_weight(
                           rng, testing::format_spec(format, 136, 200, 32, false, DType::kF16)),
                       DType::kF16, &p)
                      .ok());
    }
    DeviceExpertsStorage storage;
    ASSERT_TRUE(DeviceExpertsStorage::upload(packed, &storage).ok()) << format.name;
    for (int e = 0; e < 3; ++e) {
      PackedWeight back;
      ASSERT_TRUE(storage.download(e, &back).ok());
      EXPECT_EQ(back.codes, packed[static_cast<size_t>(e)].codes) << format.name << " " << e;
      EXPECT_EQ(back.scales, packed[static_cast<size_t>(e)].scales) << format.name << " " << e;
      EXPECT_EQ(back.zero_fold, packed[static_cast<size_t>(e)].zero_fold)
          << format.name << " " << e;
    }
  }
}

}  // namespace
}  // namespace sailfish
