#include "launch_summary.h"

#include <cstdio>
#include <cstring>

namespace sailfish::bench {

std::string launch_summary(const Plan& p) {
  char text[192];
  if (p.tier == Tier::kDecode) {
    const DecodePlan& d = p.decode;
    std::snprintf(text, sizeof(text), "%s tiles=%d m_groups=%d splits=%d epilogue=%d",
                  d.warp_split ? "warp_split" : "strip", d.token_tiles, d.m_groups, d.splits,
                  d.epilogue);
    if (d.warp_split) {
      const size_t used = std::strlen(text);
      std::snprintf(text + used, sizeof(text) - used, " warp_stages=%d", d.warp_stages);
    }
    if (d.stream_k_strips > 0) {
      const size_t used = std::strlen(text);
      std::snprintf(text + used, sizeof(text) - used, " stream_k_strips=%d", d.stream_k_strips);
    }
    if (d.cluster_push) {
      const size_t used = std::strlen(text);
      std::snprintf(text + used, sizeof(text) - used, " cluster_push=1");
    }
    if (d.warp_split && d.warps != 4) {
      const size_t used = std::strlen(text);
      std::snprintf(text + used, sizeof(text) - used, " warps=%d", d.warps);
    }
    if (d.spread_ctas > 0) {
      const size_t used = std::strlen(text);
      std::snprintf(text + used, sizeof(text) - used, " spread=%d", d.spread_ctas);
    }
    // What the placement rules count: the CTAs an SM holds at this shared memory (the bytes in
    // flight an SM keeps follow from them, the stages and the stage size).
    const size_t used = std::strlen(text);
    std::snprintf(text + used, sizeof(text) - used, " resident=%d shared=%d", d.resident_ctas,
                  d.shared_bytes);
  } else if (p.tier == Tier::kPrefill) {
    const PrefillPlan& f = p.prefill;
    std::snprintf(text, sizeof(text), "tokens=%d splits=%d stages=%d grid=%d", f.tokens,
                  f.splits, f.stages, f.grid);
    if (f.stream_k) {
      const size_t used = std::strlen(text);
      std::snprintf(text + used, sizeof(text) - used, " stream_k=1");
    }
  } else {
    std::snprintf(text, sizeof(text), "chunk_rows=%lld",
                  static_cast<long long>(p.dense_chunk_rows));
  }
  return text;
}

}  // namespace sailfish::bench
