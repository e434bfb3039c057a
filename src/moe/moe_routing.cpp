// MoeRouting's checks and the align step on the host (include/sailfish/moe.h, docs/MOE.md).
#include <algorithm>
#include <cmath>

#include "sailfish/moe.h"

namespace sailfish {

int MoeRouting::local_experts() const {
  if (expert_map.empty()) return experts;
  return static_cast<int>(std::count_if(expert_map.begin(), expert_map.end(),
                                        [](int32_t local) { return local >= 0; }));
}

Status validate(const MoeRouting& r) {
  if (r.tokens < 0) return invalid_argument("MoE routing: tokens is ", r.tokens, "; must be >= 0");
  if (r.top_k < 1) return invalid_argument("MoE routing: top_k is ", r.top_k, "; must be >= 1");
  if (r.experts < 1) {
    return invalid_argument("MoE routing: experts is ", r.experts, "; must be >= 1");
  }
  if (r.top_k > r.experts) {
    return invalid_argument("MoE routing: top_k ", r.top_k, " exceeds the ", r.experts,
                            " experts; a token picks at most every expert once");
  }
  // Choice rows are int32 on the device (the sorted arrays); keep every index below 2^31.
  constexpr int64_t kMaxChoices = int64_t(1) << 30;
  if (r.tokens > kMaxChoices / r.top_k) {
    return unsupported("MoE routing: tokens * top_k = ", r.tokens, " * ", r.top_k,
                       " choice rows; at most 2^30 are supported (int32 row indices)");
  }
  const size_t choices = static_cast<size_t>(r.choices());
  if (r.topk_ids.size() != choices || r.topk_weights.size() != choices) {
    return invalid_argument("MoE routing: topk_ids has ", r.topk_ids.size(),
                            " entries and topk_weights ", r.topk_weights.size(),
                            "; both must hold tokens * top_k = ", choices);
  }
  for (size_t i = 0; i < choices; ++i) {
    const int32_t e = r.topk_ids[i];
    if (e < 0 || e >= r.experts) {
      return invalid_argument("MoE routing: topk_ids[", i / r.top_k, "][", i % r.top_k, "] is ", e,
                              "; expert ids must lie in [0, ", r.experts, ")");
    }
    if (!std::isfinite(r.topk_weights[i])) {
      return invalid_argument("MoE routing: topk_weights[", i / r.top_k, "][", i % r.top_k,
                              "] is not finite");
    }
  }
  if (r.expert_map.empty()) return Status();
  if (r.expert_map.size() != static_cast<size_t>(r.experts)) {
    return invalid_argument("MoE routing: expert_map has ", r.expert_map.size(),
                            " entries; it must hold one per expert (", r.experts,
                            ") or be empty (every expert local)");
  }
  const int local = r.local_experts();
  std::vector<bool> seen(static_cast<size_t>(local), false);
  for (size_t e = 0; e < r.expert_map.size(); ++e) {
    const int32_t l = r.expert_map[e];
    if (l < -1 || l >= local || (l >= 0 && seen[static_cast<size_t>(l)])) {
      return invalid_argument(
          "MoE routing: expert_map[", e, "] is ", l, "; the map must send this rank's ", local,
          " experts one to one onto 0 .. ", local - 1, " and every other expert to -1");
    }
    if (l >= 0) seen[static_cast<size_t>(l)] = true;
  }
  return Status();
}

bool is_supported_moe_block_rows(int block_rows) {
  return std::find(std::begin(kMoeBlockRowChoices), std::end(kMoeBlockRowChoices), block_rows) !=
         std::end(kMoeBlockRowChoices);
}

int moe_block_rows_for(int64_t choices, int local_experts, int64_t expert_code_bytes) {
  if (choices <= 0 || local_experts <= 0) return kMoeBlockRowChoices[0];
  const int64_t filled = std::min<int64_t>(choices, local_experts);
  const int64_t rows = (choices + filled - 1) / filled;
  // Only at 8 rows: at 7 the 16-row block won on some large projections and lost on others (by
  // up to 1.17x, H200), at 6 it lost on most, and above 8 the rule's own block is 16 rows.
  if (expert_code_bytes >= kMoeWideBlockExpertBytes && rows == 8) return 16;
  for (int block_rows : kMoeBlockRowChoices) {
    if (rows <= block_rows) return block_rows;
  }
  return std::end(kMoeBlockRowChoices)[-1];
}

int64_t moe_expected_blocks(int64_t choices, int local_experts, int block_rows) {
  if (choices <= 0 || local_experts <= 0 || block_rows <= 0) return 0;
  const int64_t filled = std::min<int64_t>(choices, local_experts);
  const int64_t rows = (choices + filled - 1) / filled;
  return filled * ((rows + block_rows - 1) / block_rows);
}

int64_t moe_max_blocks(int64_t tokens, int top_k, int local_experts, int block_rows) {
  if (tokens <= 0 || top_k <= 0 || local_experts <= 0 || block_rows <= 0) return 0;
  const int64_t rows = tokens * top_k;
  const int64_t filled_experts = std::min<int64_t>(local_experts, rows);
  return (rows + filled_experts * (block_rows - 1)) / block_rows;
}

Status moe_align(const MoeRouting& routing, int block_rows, MoeAlignment* out) {
  if (out == nullptr) return invalid_argument("moe_align: out is null");
  SF_RETURN_IF_ERROR(validate(routing));
  if (!is_supported_moe_block_rows(block_rows)) {
    return invalid_argument("moe_align: block_rows is ", block_rows,
                            "; accepted: 8, 16 or 32 (1, 2 or 4 tiles of 8 tokens)");
  }
  const int local = routing.local_experts();
  MoeAlignment result;
  result.block_rows = block_rows;
  result.expert_rows.assign(static_cast<size_t>(local), 0);
  for (int32_t e : routing.topk_ids) {
    const int l = routing.local_expert(e);
    if (l >= 0) ++result.expert_rows[static_cast<size_t>(l)];
  }
  // A counting sort: each expert's first slot, then the rows in ascending order (stable).
  std::vector<int64_t> next_slot(static_cast<size_t>(local), 0);
  int64_t slots = 0;
  for (int l = 0; l < local; ++l) {
    next_slot[static_cast<size_t>(l)] = slots;
    const int64_t blocks =
        (result.expert_rows[static_cast<size_t>(l)] + block_rows - 1) / block_rows;
    result.block_experts.insert(result.block_experts.end(), static_cast<size_t>(blocks), l);
    slots += blocks * block_rows;
  }
  result.sorted_rows.assign(static_cast<size_t>(slots), -1);
  result.choice_slots.assign(static_cast<size_t>(routing.choices()), -1);
  for (int64_t row = 0; row < routing.choices(); ++row) {
    const int l = routing.local_expert(routing.topk_ids[static_cast<size_t>(row)]);
    if (l < 0) continue;
    const int64_t slot = next_slot[static_cast<size_t>(l)]++;
    result.sorted_rows[static_cast<size_t>(slot)] = static_cast<int32_t>(row);
    result.choice_slots[static_cast<size_t>(row)] = static_cast<int32_t>(slot);
  }
  *out = std::move(result);
  return Status();
}

Status MoeAlignLayout::make(int64_t tokens, int top_k, int local_experts, int block_rows,
                            MoeAlignLayout* out) {
  if (out == nullptr) return invalid_argument("MoeAlignLayout::make: out is null");
  if (tokens < 0 || top_k < 1) {
    return invalid_argument("MoE align layout: tokens ", tokens, " and top_k ", top_k,
                            "; need tokens >= 0 and top_k >= 1");
  }
  if (local_experts < 1 || local_experts > kMoeMaxLocalExperts) {
    return unsupported("MoE align layout: ", local_experts,
                       " local experts; the align kernel takes 1 to ", kMoeMaxLocalExperts);
  }
  if (!is_supported_moe_block_rows(block_rows)) {
    return invalid_argument("MoE align layout: block_rows is ", block_rows,
                            "; accepted: 8, 16 or 32");
  }
  if (tokens > (int64_t(1) << 30) / top_k) {
    return unsupported("MoE align layout: tokens * top_k = ", tokens, " * ", top_k,
                       " choice rows; at most 2^30 are supported (int32 row indices)");
  }
  const auto aligned = [](size_t bytes) { return (bytes + 15) / 16 * 16; };
  MoeAlignLayout layout;
  layout.block_rows = block_rows;
  layout.local_experts = local_experts;
  layout.max_blocks = moe_max_blocks(tokens, top_k, local_experts, block_rows);
  size_t at = 0;
  layout.sorted_rows_offset = at;
  at += aligned(sizeof(int32_t) * static_cast<size_t>(layout.max_blocks * block_rows));
  layout.block_experts_offset = at;
  at += aligned(sizeof(int32_t) * static_cast<size_t>(layout.max_blocks));
  layout.expert_rows_offset = at;
  at += aligned(sizeof(int32_t) * static_cast<size_t>(local_experts));
  layout.choice_slots_offset = at;
  at += aligned(sizeof(int32_t) * static_cast<size_t>(tokens * top_k));
  layout.counters_offset = at;
  at += aligned(sizeof(int32_t) * kMoeAlignCounters);
  layout.bytes = at;
  *out = layout;
  return Status();
}

const char* moe_input_name(MoeInput input) {
  switch (input) {
    case MoeInput::kToken: return "token";
    case MoeInput::kChoice: return "choice";
  }
  return "?";
}

const char* moe_output_name(MoeOutput output) {
  switch (output) {
    case MoeOutput::kChoice: return "choice";
    case MoeOutput::kTokenSum: return "token_sum";
  }
  return "?";
}

}  // namespace sailfish
