// Mixture-of-experts layers: the routing contract, the align step that sorts a layer's work by
// expert, and the float64 reference every MoE path is checked against (docs/MOE.md).
//
// A router sends each of `tokens` tokens to top_k experts: topk_ids[t][j] with weight
// topk_weights[t][j]. Choice row r = t * top_k + j names one (token, choice) pair. A layer runs
// two expert GEMMs, gate_up then down, with the activation between them; each is one MoE GEMM:
//
//   e     = topk_ids[t][j]                       the choice's expert (W_e: its [n][k] weight)
//   input = A[t]  (MoeInput::kToken: the layer's input, [tokens][k]) or
//           A[r]  (MoeInput::kChoice: the previous GEMM's rows after the activation,
//                  [tokens * top_k][k])
//   P[r]  = input . W_e^T (+ bias_e)
//   s_r   = topk_weights[t][j] when MoeGemm::apply_router_weights, else 1
//   Y[r]  = s_r * P[r]                  (MoeOutput::kChoice: [tokens * top_k][n]), or
//   Y[t]  = sum over j of s_r * P[r]    (MoeOutput::kTokenSum: [tokens][n], the down projection)
//
// Expert parallelism: expert_map[global expert] is the expert's index among this rank's weights,
// or -1 when another rank holds it. A choice of an expert held elsewhere adds nothing here (its
// kChoice row is zero); the engine sums the ranks' outputs.
#pragma once

#include <cstdint>
#include <vector>

#include "sailfish/quantized_weight.h"
#include "sailfish/status.h"

namespace sailfish {

struct MoeRouting {
  int64_t tokens = 0;
  int top_k = 0;
  int experts = 0;                  // global expert count: every id lies in [0, experts)
  std::vector<int32_t> topk_ids;    // [tokens][top_k]
  std::vector<float> topk_weights;  // [tokens][top_k], finite
  std::vector<int32_t> expert_map;  // [experts]: local index or -1; empty: every expert local

  int64_t choices() const { return tokens * top_k; }
  // This rank's experts: `experts` without a map, else the map's non-negative entries.
  int local_experts() const;
  // The local expert of global expert e, or -1 (e must lie in [0, experts)).
  int local_expert(int32_t e) const {
    return expert_map.empty() ? e : expert_map[static_cast<size_t>(e)];
  }
};

// Checks sizes, id ranges, finite weights, and that the map sends the local experts one to one
// onto 0 .. local_experts() - 1. A token's ids may repeat (each choice then counts on its own).
Status validate(const MoeRouting& routing);

// A layer's sorted work comes in blocks of one size (the first seed's 16 rows, widening to 32 at
// many tokens per expert; 8 where most blocks hold one real row, as at batch one). A block is the
// token tiles of one CTA of the decode tier's warp-split kernel: 1, 2 or 4 tiles of 8 tokens.
constexpr int kMoeBlockRowChoices[] = {8, 16, 32};
bool is_supported_moe_block_rows(int block_rows);

// The default block size for `choices` routed rows over `local_experts` experts: the smallest of
// 8, 16, 32 that holds an expert's average rows (the experts that can get any), else 32; except
// that an expert of at least kMoeWideBlockExpertBytes of weight codes (`expert_code_bytes`, 0 when
// unknown) whose average rounds up to 8 rows takes 16. At that average a uniform routing puts
// more than 8 rows on about 40% of the experts, and each 8-row block past an expert's first streams
// its weight again; a large expert's second stream costs more than the 16-row block's extra
// arithmetic, a small one's less (docs/perf/moe.md, "v4": 0.77-1.03x the 8-row time on
// DeepSeek-V3, gpt-oss and Mixtral, H100 and H200; Qwen3's 0.75-1.5 MiB experts 1.04-1.12x).
constexpr int64_t kMoeWideBlockExpertBytes = int64_t{4} << 20;
int moe_block_rows_for(int64_t choices, int local_experts, int64_t expert_code_bytes = 0);

// The blocks an even routing fills: min(R, E) experts with ceil(R / min(R, E)) rows each, in
// blocks of block_rows (R choices, E local experts). Plans size the split-K depth by it, since the
// real count is known only on the device.
int64_t moe_expected_blocks(int64_t choices, int local_experts, int block_rows);

// The align step's result: the choice rows of local experts, grouped by expert in ascending local
// order, each group in ascending choice-row order and padded with -1 to a whole number of blocks.
// Deterministic: it depends on the routing only, never on timing (the GPU align kernel must
// produce these very arrays).
struct MoeAlignment {
  int block_rows = 0;
  std::vector<int32_t> sorted_rows;    // [blocks() * block_rows]: choice row, or -1 (padding)
  std::vector<int32_t> block_experts;  // [blocks()]: the local expert of each block
  std::vector<int32_t> expert_rows;    // [local_experts]: choice rows each local expert got
  std::vector<int32_t> choice_slots;   // [choices]: the slot holding each choice row, or -1 (an
                                       // expert held elsewhere): sorted_rows' inverse

  int64_t blocks() const { return static_cast<int64_t>(block_experts.size()); }
};

Status moe_align(const MoeRouting& routing, int block_rows, MoeAlignment* out);

// The most blocks moe_align can produce for any routing of this size: floor((R + E' (B - 1)) / B)
// with R = tokens * top_k choice rows and E' = min(local_experts, R) experts that can hold any.
// Device buffers of the sorted arrays are sized by it, since the count is known only on the device.
int64_t moe_max_blocks(int64_t tokens, int top_k, int local_experts, int block_rows);

// Where the align step's arrays lie in one caller-owned device buffer (include/sailfish/moe_gpu.h),
// sized for the worst routing of this size (moe_max_blocks), since the real block count is known
// only on the device. Every array is int32; offsets are 16-byte aligned.
struct MoeAlignLayout {
  int block_rows = 0;
  int local_experts = 0;
  int64_t max_blocks = 0;
  size_t sorted_rows_offset = 0;    // [max_blocks * block_rows]: choice row or -1
  size_t block_experts_offset = 0;  // [max_blocks]: local expert, -1 past the blocks made
  size_t expert_rows_offset = 0;    // [local_experts]: choice rows each local expert got
  size_t choice_slots_offset = 0;   // [tokens * top_k]: slot of each choice row, or -1
  size_t counters_offset = 0;       // [kMoeAlignCounters]
  size_t bytes = 0;

  static Status make(int64_t tokens, int top_k, int local_experts, int block_rows,
                     MoeAlignLayout* out);
};
// counters[kMoeBlocksMade]: blocks the routing filled; counters[kMoeInvalidChoices]: choice rows
// whose expert id (or its expert_map entry) was out of range, skipped and counted, since the
// device cannot return an error without the host waiting for it. The others are reserved (0).
enum MoeAlignCounter : int { kMoeBlocksMade = 0, kMoeInvalidChoices = 1, kMoeAlignCounters = 4 };
// The largest local expert count the align kernel takes (its per-expert cursors live in shared
// memory).
constexpr int kMoeMaxLocalExperts = 4096;

enum class MoeInput : int { kToken = 0, kChoice = 1 };
enum class MoeOutput : int { kChoice = 0, kTokenSum = 1 };
const char* moe_input_name(MoeInput input);
const char* moe_output_name(MoeOutput output);

struct MoeGemm {
  MoeInput input = MoeInput::kToken;
  MoeOutput output = MoeOutput::kChoice;
  bool apply_router_weights = false;

  int64_t input_rows(const MoeRouting& r) const {
    return input == MoeInput::kToken ? r.tokens : r.choices();
  }
  int64_t output_rows(const MoeRouting& r) const {
    return output == MoeOutput::kTokenSum ? r.tokens : r.choices();
  }
};

// Y of one MoE GEMM in double (the formula above), from this rank's expert weights (all of one
// n and k). a: [gemm.input_rows][k]; bias: [local experts][n] or null; y: [gemm.output_rows][n].
Status reference_moe_gemm(const MoeRouting& routing, const MoeGemm& gemm,
                          const std::vector<QuantizedWeight>& experts, const double* a,
                          const double* bias, double* y);

}  // namespace sailfish
