// Prefill tier: the split grid's partial tiles summed inside a thread-block cluster, usable on host
// and device so CPU tests can check the rule and the layout.
//
// With splits > 1 the split grid writes fp32 partials to the workspace and reduce_kernel, a second
// launch, sums them. Where the whole grid is one wave (every CTA one work unit) the `splits` CTAs
// of a tile can instead run as one cluster: each CTA puts its accumulators in its own shared
// memory (the drained pipeline ring), the cluster syncs, and every CTA sums a share of the tile's
// token groups from all the ranks' copies (distributed shared memory) in split order, adds the
// bias and stores Y. No partials reach global memory and no second kernel runs. The adds are the
// reduce kernel's, in its order (split 0 first, then each next split, then the bias, one rounding
// to 16 bits), so the bits are the same as the reduce's: deterministic and batch-invariant modes
// may take either path.
//
// Stop 61/62 (docs/perf/prefill.md) measured what the reduce launch costs: ~10% of l3-70b.qkv at
// M = 64 (a probe without it ran 0.90x), more than the 1.3x-the-best-peer target had left.
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "prefill/config.h"

namespace sailfish::prefill {

// The portable cluster size limit of sm_90 (larger needs a non-portable opt-in).
constexpr int kMaxClusterSplits = 8;
// Only the two-CTAs-an-SM widths (config.h: ctas_per_sm): their consumer warpgroups and one
// producer warp are all the CTA's threads, and their rings hold the exchange area (below).
constexpr int kMaxClusterTokens = 64;
static_assert(ctas_per_sm(kMaxClusterTokens) == 2 && ctas_per_sm(2 * kMaxClusterTokens) == 1,
              "the kernel's clustered epilogue is built for exactly the two-CTA widths");

// The exchange area a CTA's consumers write their accumulators to: per consumer, per n8 token
// group j of the wgmma tile, 128 threads x 4 floats (a thread's acc[4j .. 4j + 3], one 16-byte
// store, a warp's 512 bytes contiguous).
SF_HOST_DEVICE constexpr int exchange_bytes(int tokens) {
  return kConsumers * (tokens / 8) * 128 * 16;
}
// Float offset of (consumer, group j, thread) in the area.
SF_HOST_DEVICE constexpr int exchange_float_offset(int tokens, int consumer, int j, int thread) {
  return ((consumer * (tokens / 8) + j) * 128 + thread) * 4;
}
// The area reuses the pipeline ring, which has at least kMinStages stages of the smallest stage
// (int4, no zero points) at every cluster width.
static_assert(exchange_bytes(16) <= kMinStages * stage_bytes(4, 16, false) &&
                  exchange_bytes(32) <= kMinStages * stage_bytes(4, 32, false) &&
                  exchange_bytes(64) <= kMinStages * stage_bytes(4, 64, false),
              "the cluster exchange area must fit the smallest pipeline ring");

// Whether a split grid can sum through clusters: 2 .. kMaxClusterSplits splits at a cluster width,
// and every unit a CTA of one wave (tiles x splits CTAs, no more than the SMs hold at once), since
// a cluster's CTAs must work on the same tile at the same time.
SF_HOST_DEVICE constexpr bool cluster_reduce_fits(int tokens, int splits, int64_t tiles,
                                                 int sm_count) {
  return tokens <= kMaxClusterTokens && splits >= 2 && splits <= kMaxClusterSplits &&
         tiles * splits <= int64_t(sm_count) * ctas_per_sm(tokens);
}

// The work unit (config.h: unit_coord numbering, split slowest) of CTA `cta` in a clustered grid:
// the cluster c = cta / splits takes tile c, its rank r = cta % splits (a 1-D cluster's rank)
// split r.
SF_HOST_DEVICE constexpr int64_t cluster_unit(int cta, int splits, int64_t tiles) {
  return int64_t(cta % splits) * tiles + cta / splits;
}

// The token groups (n8 columns of the wgmma tile, kTokens / 8 of them) rank r sums and stores:
// those with j % splits == r, so the stores spread over the ranks.
SF_HOST_DEVICE constexpr bool rank_owns_group(int j, int rank, int splits) {
  return j % splits == rank;
}

}  // namespace sailfish::prefill
