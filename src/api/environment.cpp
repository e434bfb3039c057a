#include "api/environment.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "decode/config.h"
#include "dense/config.h"
#include "prefill/config.h"

namespace sailfish::api {

namespace {

const char* env_value(const char* name) {
  const char* value = std::getenv(name);
  return (value == nullptr || *value == '\0') ? nullptr : value;
}

}  // namespace

Status env_bool(const char* name, std::optional<bool>* out) {
  out->reset();
  const char* value = env_value(name);
  if (value == nullptr) return Status();
  const std::string v(value);
  if (v == "1" || v == "true" || v == "on") {
    *out = true;
  } else if (v == "0" || v == "false" || v == "off") {
    *out = false;
  } else {
    return invalid_argument(name, "=", v, " is not a boolean; accepted: 0, 1, true, false, on, off");
  }
  return Status();
}

Status env_int(const char* name, int64_t min_value, std::optional<int64_t>* out) {
  out->reset();
  const char* value = env_value(name);
  if (value == nullptr) return Status();
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || parsed < min_value) {
    return invalid_argument(name, "=", value, " is not an integer >= ", min_value);
  }
  *out = parsed;
  return Status();
}

Status env_tier(const char* name, std::optional<Tier>* out) {
  out->reset();
  const char* value = env_value(name);
  if (value == nullptr) return Status();
  const std::string v(value);
  if (v == "auto") *out = Tier::kAuto;
  else if (v == "decode") *out = Tier::kDecode;
  else if (v == "prefill") *out = Tier::kPrefill;
  else if (v == "dense") *out = Tier::kDense;
  else return invalid_argument(name, "=", v, " is not a tier; accepted: auto, decode, prefill, dense");
  return Status();
}

Status resolve_options(const Options& options, ResolvedOptions* out) {
  ResolvedOptions r;
  std::optional<Tier> tier;
  SF_RETURN_IF_ERROR(env_tier("SAILFISH_TIER", &tier));
  r.tier = options.tier.value_or(tier.value_or(Tier::kAuto));
  if (r.tier != Tier::kAuto && r.tier != Tier::kDecode && r.tier != Tier::kPrefill &&
      r.tier != Tier::kDense) {
    return invalid_argument("Options::tier is ", int(r.tier),
                            "; accepted: Tier::kAuto, kDecode, kPrefill or kDense");
  }

  std::optional<bool> flag;
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_DETERMINISTIC", &flag));
  r.deterministic = options.deterministic.value_or(flag.value_or(false));
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_BATCH_INVARIANT", &flag));
  r.batch_invariant = options.batch_invariant.value_or(flag.value_or(false));
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_ATOMIC_EPILOGUE", &flag));
  r.atomic_epilogue = options.atomic_epilogue.value_or(flag.value_or(false));
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_PDL", &flag));
  r.programmatic_dependent_launch =
      options.programmatic_dependent_launch.value_or(flag.value_or(true));
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_DECODE_WARP_SPLIT", &flag));
  r.decode_warp_split = options.decode_warp_split.value_or(flag.value_or(true));
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_DECODE_CLUSTER_REDUCE", &flag));
  r.decode_cluster_reduce = options.decode_cluster_reduce.value_or(flag.value_or(true));
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_DECODE_STREAM_K", &flag));
  r.decode_stream_k = options.decode_stream_k.has_value() ? options.decode_stream_k : flag;
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_PREFILL_STREAM_K", &flag));
  r.prefill_stream_k = options.prefill_stream_k.has_value() ? options.prefill_stream_k : flag;
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_DECODE_CLUSTER_PUSH", &flag));
  r.decode_cluster_push =
      options.decode_cluster_push.has_value() ? options.decode_cluster_push : flag;
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_DECODE_SPREAD", &flag));
  r.decode_spread = options.decode_spread.has_value() ? options.decode_spread : flag;
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_DECODE_WIDE_WARPS", &flag));
  r.decode_wide_warps = options.decode_wide_warps.has_value() ? options.decode_wide_warps : flag;
  SF_RETURN_IF_ERROR(env_bool("SAILFISH_DENSE_FORCE_CHUNKED", &flag));
  r.dense_force_chunked = options.dense_force_chunked.value_or(flag.value_or(false));

  std::optional<int64_t> number;
  SF_RETURN_IF_ERROR(env_int("SAILFISH_DENSE_MIN_M", 1, &number));
  r.dense_min_m = options.dense_min_m.has_value() ? options.dense_min_m : number;
  SF_RETURN_IF_ERROR(env_int("SAILFISH_DENSE_CHUNK_ROWS", 64, &number));
  r.dense_chunk_rows = options.dense_chunk_rows.value_or(number.value_or(dense::kDefaultChunkRows));
  SF_RETURN_IF_ERROR(env_int("SAILFISH_DENSE_CHUNK_BYTES", 0, &number));
  r.dense_chunk_threshold_bytes = options.dense_chunk_threshold_bytes.value_or(
      number.value_or(dense::kDefaultChunkThresholdBytes));

  SF_RETURN_IF_ERROR(env_int("SAILFISH_DECODE_SPLITS", 1, &number));
  r.decode_splits = options.decode_splits.has_value() ? options.decode_splits : number;
  SF_RETURN_IF_ERROR(env_int("SAILFISH_DECODE_WARP_STAGES", 3, &number));
  r.decode_warp_stages =
      options.decode_warp_stages.has_value() ? options.decode_warp_stages : number;
  const auto& stages = r.decode_warp_stages;
  if (stages.has_value() && !decode::warp_split_builds_stages(*stages)) {
    const int deep_one = decode::warp_split_deep_stages(1);
    const int deep_two = decode::warp_split_deep_stages(2);
    const int lighter_int8 = decode::warp_split_lighter_deep_stages(8, 1);
    const bool from_options = options.decode_warp_stages.has_value();
    return invalid_argument(from_options ? "decode_warp_stages" : "SAILFISH_DECODE_WARP_STAGES",
                            " is ", *stages, "; the decode warp-split kernel runs ",
                            decode::kWarpSplitFewStages, " or ", decode::kStages,
                            " stages a warp at 17-32 tokens a CTA, ", decode::kStages, " or ",
                            deep_two, " at 9-16 (int8: ", decode::kStages, " only) and ",
                            decode::kStages, " or ", deep_one, " at 1-8",
                            lighter_int8 > 0 ? " (int8 also " : "",
                            lighter_int8 > 0 ? std::to_string(lighter_int8) + ")" : "",
                            "; a count the kernel for that M lacks is ignored");
  }
  SF_RETURN_IF_ERROR(env_int("SAILFISH_DECODE_STREAM_K_STRIPS", 1, &number));
  r.decode_stream_k_strips =
      options.decode_stream_k_strips.has_value() ? options.decode_stream_k_strips : number;
  const auto& strips = r.decode_stream_k_strips;
  if (strips.has_value() && (*strips < 1 || *strips > decode::kStreamKMaxStrips)) {
    return invalid_argument(
        options.decode_stream_k_strips.has_value() ? "decode_stream_k_strips"
                                                   : "SAILFISH_DECODE_STREAM_K_STRIPS",
        " is ", *strips, "; a Stream-K cluster holds 1 to ", decode::kStreamKMaxStrips, " strips");
  }
  SF_RETURN_IF_ERROR(env_int("SAILFISH_PREFILL_MIN_M", 1, &number));
  r.prefill_min_m = options.prefill_min_m.has_value() ? options.prefill_min_m : number;
  if (r.prefill_min_m.has_value() && *r.prefill_min_m < 1) {
    return invalid_argument("prefill_min_m is ", *r.prefill_min_m, "; must be >= 1");
  }
  SF_RETURN_IF_ERROR(env_int("SAILFISH_PREFILL_MAX_M", 1, &number));
  r.prefill_max_m = options.prefill_max_m.has_value() ? options.prefill_max_m : number;
  if (r.prefill_max_m.has_value() && *r.prefill_max_m < 1) {
    return invalid_argument("prefill_max_m is ", *r.prefill_max_m, "; must be >= 1");
  }
  SF_RETURN_IF_ERROR(env_int("SAILFISH_PREFILL_SPLITS", 1, &number));
  r.prefill_splits = options.prefill_splits.has_value() ? options.prefill_splits : number;
  SF_RETURN_IF_ERROR(env_int("SAILFISH_PREFILL_STAGES", prefill::kMinStages, &number));
  r.prefill_stages = options.prefill_stages.has_value() ? options.prefill_stages : number;
  SF_RETURN_IF_ERROR(env_int("SAILFISH_PREFILL_TOKENS", 1, &number));
  r.prefill_tokens = options.prefill_tokens.has_value() ? options.prefill_tokens : number;
  if (r.prefill_tokens.has_value() && !prefill::is_token_width(*r.prefill_tokens)) {
    return invalid_argument(
        options.prefill_tokens.has_value() ? "prefill_tokens" : "SAILFISH_PREFILL_TOKENS", " is ",
        *r.prefill_tokens, "; the prefill tier has tiles of 16, 32, 64, 128 or 256 tokens");
  }
  if (r.prefill_splits.has_value() && *r.prefill_splits < 1) {
    return invalid_argument("prefill_splits is ", *r.prefill_splits, "; must be >= 1");
  }
  if (r.prefill_stages.has_value() && *r.prefill_stages < prefill::kMinStages) {
    return invalid_argument("prefill_stages is ", *r.prefill_stages, "; must be >= ",
                            prefill::kMinStages);
  }
  if (r.decode_splits.has_value() && *r.decode_splits < 1) {
    return invalid_argument("decode_splits is ", *r.decode_splits, "; must be >= 1");
  }
  if (r.dense_min_m.has_value() && *r.dense_min_m < 1) {
    return invalid_argument("dense_min_m is ", *r.dense_min_m, "; must be >= 1");
  }
  if (r.dense_chunk_rows < 64) {
    return invalid_argument("dense_chunk_rows is ", r.dense_chunk_rows, "; must be >= 64");
  }
  if (r.dense_chunk_threshold_bytes < 0) {
    return invalid_argument("dense_chunk_threshold_bytes is ", r.dense_chunk_threshold_bytes,
                            "; must be >= 0");
  }
  *out = r;
  return Status();
}

}  // namespace sailfish::api
