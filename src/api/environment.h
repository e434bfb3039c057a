// SAILFISH_* environment variables, read at each plan() call (never cached, so a process can
// change them between plans and tests that set them exercise what they set).
#pragma once

#include <cstdint>
#include <optional>

#include "sailfish/sailfish.h"

namespace sailfish::api {

// Each returns nullopt when the variable is unset or empty, and an error naming the variable, the
// value and what is accepted when it is malformed.
Status env_bool(const char* name, std::optional<bool>* out);
Status env_int(const char* name, int64_t min_value, std::optional<int64_t>* out);
Status env_tier(const char* name, std::optional<Tier>* out);

// Options with every unset field filled from the environment, then from the defaults.
struct ResolvedOptions {
  Tier tier = Tier::kAuto;
  bool deterministic = false;
  bool batch_invariant = false;
  bool atomic_epilogue = false;
  bool programmatic_dependent_launch = true;
  std::optional<int64_t> decode_splits;  // unset: occupancy heuristic
  std::optional<int64_t> decode_warp_stages;  // unset: src/decode/launch.cu decides (3-6)
  std::optional<int64_t> prefill_min_m;   // unset: the measured default (src/api/plan.cpp)
  std::optional<int64_t> prefill_max_m;   // unset: the measured default (src/api/plan.cpp)
  std::optional<int64_t> prefill_splits;  // unset: cost model (src/prefill/config.h)
  std::optional<int64_t> prefill_stages;  // unset: as deep as fits, at most 8
  std::optional<int64_t> prefill_tokens;  // unset: cost model (src/prefill/config.h)
  std::optional<bool> prefill_stream_k;   // unset: cost model (src/prefill/stream_k.h)
  bool decode_warp_split = true;
  bool decode_cluster_reduce = true;
  std::optional<bool> decode_stream_k;  // unset: off (the split grid)
  // unset: src/decode/stream_k_grid.h, stream_k_plan
  std::optional<int64_t> decode_stream_k_strips;
  std::optional<bool> decode_cluster_push;  // unset: src/decode/launch.cu, choose_cluster_push
  std::optional<bool> decode_spread;  // unset: src/decode/grid_placement.h, spread_pays
  // unset: src/decode/warp_split_instances.h, wide_warps_pay
  std::optional<bool> decode_wide_warps;
  std::optional<int64_t> dense_min_m;  // unset: the measured table decides
  int64_t dense_chunk_rows = 0;
  int64_t dense_chunk_threshold_bytes = 0;
  bool dense_force_chunked = false;
};
Status resolve_options(const Options& options, ResolvedOptions* out);

}  // namespace sailfish::api
