// Batch-invariant plans (Options::batch_invariant; docs/DECODE.md, "Reproducibility"): the choices
// that otherwise follow M, fixed from the shape alone. In the prefill tier a token is one column
// of its tile's wgmma, whose operands are the same dequantized weights (each pair scaled in 16 bits
// before the wgmma) at any M; its fp32 adds run in k order within a split and in split order in the
// reduce. With the token width and the split depth fixed and Stream-K off (whose K ranges follow
// the tile count), what changes with M is only which other tokens share the tile and how many
// tiles the grid walks, neither of which enters a column's sums.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "prefill/config.h"
#include "sailfish/packed_format.h"

namespace sailfish::prefill {

// The M values a batch-invariant pair is judged at: decode steps to long prefill chunks.
inline constexpr int64_t kBatchInvariantProbeM[] = {1, 4, 16, 64, 256, 1024, 4096};

struct BatchInvariantChoice {
  TileChoice tiles;
  // The cost model's time for `tiles` over its best pair for the same M, at the worst probe M.
  double worst_ratio;
};

// The (token width, split depth) pair every M runs at: of the pairs the cost model knows
// (choose_tiles' candidates), the one whose worst ratio to the best pair for each M of
// kBatchInvariantProbeM is least. A pair tuned for one M costs others dearly: the first rule (64
// tokens at the depth for M = 64) ran 3.4x the default plan at M = 1024 on l3-8b.o (8 splits of
// fp32 partials over 16 tile rows; H100, docs/perf/prefill.md, "Batch-invariant mode"), where the
// model predicts 3.75x. forced_tokens / forced_splits (0: free) restrict the candidates to the
// user's prefill_tokens / prefill_splits. Ties keep the first tried: narrower, then fewer splits.
inline BatchInvariantChoice batch_invariant_tiles(const PackedGeometry& g, int sm_count,
                                                  int forced_tokens = 0,
                                                  int64_t forced_splits = 0) {
  const int64_t n_tiles = (g.n_blocks + kConsumers - 1) / kConsumers;
  constexpr size_t kProbes = std::size(kBatchInvariantProbeM);
  double best_ns[kProbes];
  for (size_t i = 0; i < kProbes; ++i) {
    const int64_t m = kBatchInvariantProbeM[i];
    const TileChoice b = choose_tiles(n_tiles, m, g.n_pad, g.k_blocks, sm_count);
    best_ns[i] = estimate_ns(n_tiles, m, g.n_pad, g.k_blocks, sm_count, b.tokens, b.splits);
  }
  // A forced depth is taken as given (plan_prefill clamps it to the k-blocks), past kMaxSplits
  // or kMinBlocksPerSplit too, as prefill_splits is elsewhere; only the width is chosen then.
  const int64_t fixed_splits =
      forced_splits != 0 ? std::min<int64_t>(forced_splits, g.k_blocks) : 0;
  BatchInvariantChoice pick{TileChoice{0, 1}, 0.0};
  for (int tokens = kMinTokens; tokens <= kMaxTokens; tokens *= 2) {
    if (forced_tokens != 0 && tokens != forced_tokens) continue;
    for (int splits = 1; splits <= kMaxSplits; ++splits) {
      if (fixed_splits == 0 && splits > 1 && g.k_blocks / splits < kMinBlocksPerSplit) break;
      const int depth = fixed_splits != 0 ? static_cast<int>(fixed_splits) : splits;
      double worst = 0.0;
      for (size_t i = 0; i < kProbes; ++i) {
        const double ns = estimate_ns(n_tiles, kBatchInvariantProbeM[i], g.n_pad, g.k_blocks,
                                      sm_count, tokens, depth);
        worst = std::max(worst, ns / best_ns[i]);
      }
      if (pick.tiles.tokens == 0 || worst < pick.worst_ratio) {
        pick = BatchInvariantChoice{TileChoice{tokens, depth}, worst};
      }
      if (fixed_splits != 0) break;
    }
  }
  return pick;
}

}  // namespace sailfish::prefill
