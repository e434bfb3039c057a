// The decode tier's choices (decode/launch.h, DecodeChoices) from resolved options: what plan()
// passes plan_decode, and what the CPU planner model's tool passes it (tests/model), so both plan
// from the same SAILFISH_* settings alike.
#pragma once

#include "api/environment.h"
#include "decode/launch.h"

namespace sailfish::api {

inline decode::DecodeChoices decode_choices(const ResolvedOptions& resolved) {
  decode::DecodeChoices choices;
  choices.splits = resolved.decode_splits;
  choices.warp_stages = resolved.decode_warp_stages;
  choices.stream_k = resolved.decode_stream_k;
  choices.stream_k_strips = resolved.decode_stream_k_strips;
  choices.warp_split = resolved.decode_warp_split;
  choices.cluster_reduce = resolved.decode_cluster_reduce;
  choices.cluster_push = resolved.decode_cluster_push;
  choices.spread = resolved.decode_spread;
  choices.wide_warps = resolved.decode_wide_warps;
  return choices;
}

}  // namespace sailfish::api
