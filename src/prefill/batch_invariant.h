// Batch-invariant plans (Options::batch_invariant; docs/DECODE.md, "Reproducibility"): the choices
// that otherwise follow M, fixed from the shape alone. In the prefill tier a token is one column
// of its tile's wgmma, whose operands are the same dequantized weights (each pair scaled in 16 bits
// before the wgmma) at any M; its fp32 adds run in k order within a split and in split order in the
// reduce. With the token width and the split depth fixed and Stream-K off (whose K ranges follow
// the tile count), what changes with M is only which other tokens share the tile and how many
// tiles the grid walks, neither of which enters a column's sums.
#pragma once

#include <cstdint>

#include "prefill/config.h"
#include "sailfish/packed_format.h"

namespace sailfish::prefill {

// The width every M runs at unless prefill_tokens is set: one tile up to M = 64, where decode-sized
// M pays the least for rows of zeros among the widths that keep the wide-M step cost low.
inline constexpr int kBatchInvariantTokens = 64;

// The split depth every M takes unless prefill_splits is set: the cost model's depth for a single
// row of tiles (M = tokens), where splitting K matters most; larger M pays for the extra partials
// (l3-8b.o at M = 1024: 3.4x the default plan, on an H100). A second rule, the pair with the least
// worst ratio to the model's best over M = 1-4096, took 128-token tiles on two of three Llama-3
// layers and ran worse on the whole (geometric mean 2.13x the default against 1.86x, l3-8b.gate_up
// at M = 1 5.0x): below M = 128 the model puts the 128-token step up to 1.6x too fast
// (docs/perf/prefill.md, "Batch-invariant mode").
inline int batch_invariant_splits(const PackedGeometry& g, int sm_count, int tokens) {
  const int64_t n_tiles = (g.n_blocks + kConsumers - 1) / kConsumers;
  return choose_tiles(n_tiles, tokens, g.n_pad, g.k_blocks, sm_count, tokens).splits;
}

}  // namespace sailfish::prefill
