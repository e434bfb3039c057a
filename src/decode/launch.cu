// Decode tier host side: plan-time configuration (token tiles, split depth, epilogue, workspace)
// and the launch sequence prep -> main -> reduce (the reduce only for Epilogue::kPartials).
#include <algorithm>
#include <utility>

#include "common/cuda_check.h"
#include "common/host_math.h"
#include "common/launch.cuh"
#include "common/zero_planes.h"
#include "decode/config.h"
#include "decode/kernel_instances.h"
#include "decode/launch.h"
#include "decode/prep_kernel.cuh"

namespace sailfish::decode {

using ::sailfish::detail::align_up;

namespace {

template <typename T>
Status occupancy_for(int bits, const DecodePlan& d, bool zero, int* ctas) {
  if (d.moe) {
    return bits == 4 ? moe_kernel_occupancy<T, 4>(d.token_tiles, zero, d.shared_bytes, ctas)
                     : moe_kernel_occupancy<T, 8>(d.token_tiles, zero, d.shared_bytes, ctas);
  }
  const bool sk = d.stream_k_strips > 0;
  return bits == 4 ? main_kernel_occupancy<T, 4>(d.token_tiles, d.warp_split, zero, d.warp_stages,
                                                 sk, d.warps, d.shared_bytes, ctas)
                   : main_kernel_occupancy<T, 8>(d.token_tiles, d.warp_split, zero, d.warp_stages,
                                                 sk, d.warps, d.shared_bytes, ctas);
}

template <typename T>
Status max_clusters_for(int bits, const DecodePlan& d, bool zero, int size, int* clusters) {
  if (d.moe) {
    return bits == 4 ? moe_max_clusters<T, 4>(d.token_tiles, zero, d.shared_bytes, size, clusters)
                     : moe_max_clusters<T, 8>(d.token_tiles, zero, d.shared_bytes, size, clusters);
  }
  const bool sk = d.stream_k_strips > 0;
  return bits == 4 ? warp_split_max_clusters<T, 4>(d.token_tiles, zero, d.warp_stages, sk,
                                                   d.warps, d.shared_bytes, size, clusters)
                   : warp_split_max_clusters<T, 8>(d.token_tiles, zero, d.warp_stages, sk,
                                                   d.warps, d.shared_bytes, size, clusters);
}

// CTAs of d's kernel instance one SM holds, for the problem's activation type, bit width and
// zero points: CUDA's occupancy query on the current device (DeviceQueries::ctas_per_sm).
Status cuda_ctas_per_sm(const Problem& p, const DecodePlan& d, int* ctas) {
  const int bits = p.geometry.bits;
  const bool zero = p.zero_kind != ZeroPointKind::kNone;
  return p.act_dtype == DType::kF16 ? occupancy_for<__half>(bits, d, zero, ctas)
                                    : occupancy_for<__nv_bfloat16>(bits, d, zero, ctas);
}

// Clusters of `size` CTAs of d's instance resident at once: CUDA's query on the current device
// (DeviceQueries::max_clusters).
Status cuda_max_clusters(const Problem& p, const DecodePlan& d, int size, int* clusters) {
  const int bits = p.geometry.bits;
  const bool zero = p.zero_kind != ZeroPointKind::kNone;
  return p.act_dtype == DType::kF16
             ? max_clusters_for<__half>(bits, d, zero, size, clusters)
             : max_clusters_for<__nv_bfloat16>(bits, d, zero, size, clusters);
}

// The max_clusters(size) that split_depth.h's cluster_split_count and stream_k_plan ask: clusters
// of `size` CTAs of d's instance resident at once. A failed query counts as none; the first failure
// is kept in *first_error for the caller to return.
auto resident_clusters(const DeviceQueries& q, const DecodePlan& d, Status* first_error) {
  return [&q, &d, first_error](int size) {
    int clusters = 0;
    Status query = q.max_clusters(d, size, &clusters);
    if (!query.ok()) {
      if (first_error->ok()) std::swap(*first_error, query);
      return 0;
    }
    return clusters;
  };
}

template <typename T>
Status launch_for(int bits, const DecodeParams& params, const DecodePlan& d, dim3 grid, bool pdl,
                  cudaStream_t stream) {
  return bits == 4 ? launch_main_kernel<T, 4>(params, d.token_tiles, d.warp_split, d.warps, grid,
                                              d.shared_bytes, pdl, stream)
                   : launch_main_kernel<T, 8>(params, d.token_tiles, d.warp_split, d.warps, grid,
                                              d.shared_bytes, pdl, stream);
}

// Plan d with the cluster epilogue's push-form receive area for `splits` ranks added to its
// shared memory (cluster_epilogue.h, cluster_receive_bytes: the area lies past the warps' regions).
DecodePlan with_receive_area(const DecodePlan& d, int splits) {
  DecodePlan pushed = d;
  pushed.shared_bytes += cluster_receive_bytes(splits, d.token_tiles);
  return pushed;
}

// How many clusters of `to`'s instance (clusters of from.splits CTAs) are resident at once, and
// whether that keeps as many of the grid's grid_clusters clusters resident as `from` did: the
// check every change to a cluster plan's CTA (the push form's receive area, the wide instance,
// the spread padding) must pass before the plan takes it.
struct ClusterResidency {
  int after = 0;
  bool kept = false;
};
Status cluster_residency(const DeviceQueries& q, const DecodePlan& from, const DecodePlan& to,
                         int64_t grid_clusters, ClusterResidency* r) {
  Status first_error;
  const int before = resident_clusters(q, from, &first_error)(from.splits);
  r->after = resident_clusters(q, to, &first_error)(from.splits);
  r->kept = r->after >= std::min<int64_t>(before, grid_clusters);
  return first_error;
}

// Occupancy, split depth and split epilogue.
// Several splits: fp32 partials summed in split order (the reduce kernel, or the cluster of a
// strip's split CTAs through distributed shared memory, which saves the second launch and the
// workspace) unless the red.global epilogue was asked for; it rounds every partial sum to 16
// bits, which measured up to ~3x the error of a plain bf16 GEMM (docs/perf).
// pair_fallback: split_depth.h, cluster_split_count (two clustered splits rather than the reduce
// kernel where their grid covers every SM; at one token tile four where that evens the grid out).
Status choose_splits_and_epilogue(std::optional<int64_t> forced_splits, bool cluster_reduce,
                                  bool pair_fallback, const DeviceQueries& q, const Plan* plan,
                                  DecodePlan* d) {
  const Problem& p = plan->problem;
  const PackedGeometry& g = p.geometry;
  int ctas_per_sm = 0;
  // Two splits from a wave rule (split_depth.h): a grid of one uneven wave, or of a partial wave,
  // or (int8, one token tile) of more CTAs than SMs.
  bool wave_pair = false;
  SF_RETURN_IF_ERROR(q.ctas_per_sm(*d, &ctas_per_sm));
  if (ctas_per_sm < 1) {
    return internal_error("decode kernel does not fit on an SM (", d->token_tiles, " tiles)");
  }
  if (forced_splits.has_value()) {
    d->splits = static_cast<int>(std::min<int64_t>(*forced_splits, g.k_blocks));
  } else if (d->warp_split) {
    d->splits = warp_split_count(g.n_blocks, d->m_groups, g.k_blocks, plan->sm_count, ctas_per_sm);
    const int64_t slots = int64_t(plan->sm_count) * ctas_per_sm;
    // The one-wave rules (an uneven wave; int4's partial wave) only at 1-2 token tiles: at 3-4 a
    // pair at four stages keeps the plan from the three-stage depth below (l3-70b.qkv at M = 32:
    // s2/e3 at four stages 30.1 us, at three 26.5).
    const int64_t tiles = g.n_blocks * d->m_groups;
    const bool one_wave_pair =
        d->token_tiles <= 2 &&
        (one_wave_split_pays(tiles, g.k_blocks, plan->sm_count, slots) ||
         (g.bits == 4 && partial_wave_split_pays(tiles, g.k_blocks, plan->sm_count, ctas_per_sm)));
    wave_pair = d->splits == 1 && one_wave_pair;
    if (d->splits == 1 && !wave_pair && g.bits == 8 && d->token_tiles == 1) {
      // split_depth.h, int8_tail_split_pays: the CTAs an SM holds once the pair's push area is
      // added.
      int pushed_ctas_per_sm = 0;
      SF_RETURN_IF_ERROR(q.ctas_per_sm(with_receive_area(*d, 2), &pushed_ctas_per_sm));
      wave_pair = int8_tail_split_pays(g.bits, d->token_tiles, tiles, g.k_blocks,
                                       plan->sm_count, pushed_ctas_per_sm);
    }
    if (wave_pair) d->splits = 2;
  } else {
    d->splits = split_count(g.n_blocks, d->m_groups, g.k_blocks, plan->sm_count, ctas_per_sm);
  }
  if (d->splits == 1) {
    d->epilogue = static_cast<int>(Epilogue::kStore);
    return Status();
  }
  if (plan->atomic_epilogue) {
    d->epilogue = static_cast<int>(Epilogue::kAtomic);
    d->init_output = true;
    return Status();
  }
  d->epilogue = static_cast<int>(Epilogue::kPartials);
  if (!cluster_reduce || !d->warp_split || q.compute_major < 9) return Status();
  Status first_error;  // of the occupancy queries; a failed query counts as no cluster
  const int cluster_splits =
      cluster_split_count(d->splits, forced_splits.has_value() || wave_pair,
                          g.n_blocks * d->m_groups, static_cast<int64_t>(g.code_bytes()),
                          resident_clusters(q, *d, &first_error),
                          pair_fallback ? plan->sm_count : 0,
                          pair_fallback && d->token_tiles == 1 ? g.k_blocks : 0);
  SF_RETURN_IF_ERROR(first_error);
  if (cluster_splits > 0) {
    d->splits = cluster_splits;
    d->epilogue = static_cast<int>(Epilogue::kCluster);
  }
  return Status();
}

// The Stream-K grid in place of the split plan *d where it was asked for (DecodeChoices::
// stream_k; stream_k_grid.h, stream_k_plan) and applies: int4 at 1-2 token tiles on sm_90,
// warp-split kernel, the cluster epilogue allowed, no red.global epilogue. A forced split depth is
// the CTAs a cluster. Stages: the deep pipeline where the kernel has it and the grid puts at most
// one CTA on an SM (as for the split grid), else kStages; a forced count is kept. Where no Stream-K
// grid fits, the split plan stays.
Status choose_stream_k(const DecodeChoices& choices, bool stages_forced, const DeviceQueries& q,
                       const Plan* plan, DecodePlan* d) {
  const Problem& p = plan->problem;
  const PackedGeometry& g = p.geometry;
  if (!choices.stream_k.value_or(false) || g.bits != 4 || !d->warp_split || d->token_tiles > 2 ||
      !choices.cluster_reduce || plan->atomic_epilogue) {
    return Status();
  }
  if (q.compute_major < 9) return Status();
  auto plan_at = [&](int stages, DecodePlan* sk, StreamKPlan* chosen) -> Status {
    *sk = *d;
    sk->stream_k_strips = 1;  // picks the Stream-K instance for the queries
    sk->warp_stages = stages;
    sk->shared_bytes = sk->warps * (warp_split_region_bytes(sk->warp_stage_bytes, stages) +
                                    stream_k_park_bytes(sk->token_tiles));
    int ctas_per_sm = 0;
    SF_RETURN_IF_ERROR(q.ctas_per_sm(*sk, &ctas_per_sm));
    if (ctas_per_sm < 1) {
      *chosen = {};
      return Status();
    }
    Status first_error;
    *chosen = stream_k_plan(g.n_blocks, d->m_groups, g.k_blocks, plan->sm_count, ctas_per_sm,
                            static_cast<int>(choices.stream_k_strips.value_or(0)),
                            static_cast<int>(choices.splits.value_or(0)),
                            resident_clusters(q, *sk, &first_error));
    return first_error;
  };
  DecodePlan sk;
  StreamKPlan chosen;
  const bool has_deep = warp_split_has_deep(g.bits, d->token_tiles);
  const int stages = stages_forced ? d->warp_stages : kStages;
  SF_RETURN_IF_ERROR(plan_at(stages, &sk, &chosen));
  if (chosen.strips == 0) return Status();
  const int64_t ctas = (g.n_blocks + chosen.strips - 1) / chosen.strips * d->m_groups *
                       chosen.cluster;
  if (!stages_forced && has_deep && ctas <= plan->sm_count) {
    DecodePlan deep;
    StreamKPlan deep_chosen;
    SF_RETURN_IF_ERROR(plan_at(warp_split_deep_stages(d->token_tiles), &deep, &deep_chosen));
    if (deep_chosen.strips == chosen.strips && deep_chosen.cluster == chosen.cluster) sk = deep;
  }
  sk.stream_k_strips = chosen.strips;
  sk.splits = chosen.cluster;
  sk.epilogue = static_cast<int>(Epilogue::kCluster);
  *d = sk;
  return Status();
}

// The cluster epilogue's push form (cluster_epilogue.h, kClusterPushMaxTiles) for the split plan
// *d, which then carries its receive area. Unasked, only where the area leaves as many of the
// grid's clusters resident at once as before: on the H200 2 ranks ran 0.85-0.98x the barrier form's
// time on the small and mid layers at M = 1 and 16 (v21), 3-7 ranks with the fragments dealt over
// them 0.93-0.98x (v22), and at M = 32 an area that cost a third CTA an SM 1.17x
// (docs/perf/decode.md). Asked (tests, tuning): wherever a cluster of the plan's size still fits
// with the area.
Status choose_cluster_push(std::optional<bool> asked, const DeviceQueries& q, const Plan* plan,
                           DecodePlan* d) {
  d->cluster_push = false;
  if (!asked.value_or(true) || d->epilogue != static_cast<int>(Epilogue::kCluster) ||
      d->stream_k_strips > 0 || d->token_tiles > kClusterPushMaxTiles) {
    return Status();
  }
  const Problem& p = plan->problem;
  DecodePlan pushed = with_receive_area(*d, d->splits);
  ClusterResidency residency;
  SF_RETURN_IF_ERROR(
      cluster_residency(q, *d, pushed, p.geometry.n_blocks * d->m_groups, &residency));
  if (residency.after < 1 || (!asked.has_value() && !residency.kept)) return Status();
  pushed.cluster_push = true;
  *d = pushed;
  return Status();
}

// CTAs of the warp-split plan d's grid (split grid or Stream-K clusters).
int64_t warp_split_grid_ctas(const PackedGeometry& g, const DecodePlan& d) {
  const int64_t strips_per_cta = d.stream_k_strips > 0 ? d.stream_k_strips : 1;
  return (g.n_blocks + strips_per_cta - 1) / strips_per_cta * d.m_groups * d.splits;
}

// The wide instance (tile_shapes.h, kWarpSplitWideWarps warps a CTA) for the split plan *d: one
// token tile, the split grid, four stages a warp (not where the caller forced another count), the
// same splits, epilogue and push form. Unasked, where warp_split_instances.h's wide_warps_pay and
// the wide CTAs keep the grid in as few waves and as many of its clusters resident at once as the
// plan had; asked (tests, tuning), wherever the wide CTA fits an SM with the plan's clusters
// resident. Before spread_over_sms, which then pads the plan it keeps.
Status choose_wide_warps(std::optional<bool> asked, bool stages_forced, const DeviceQueries& q,
                         const Plan* plan, DecodePlan* d) {
  const Problem& p = plan->problem;
  const PackedGeometry& g = p.geometry;
  if ((asked.has_value() && !*asked) || !d->warp_split || d->token_tiles != 1 ||
      d->stream_k_strips > 0 || d->warps != kWarpSplitWarps ||
      (stages_forced && d->warp_stages != kStages)) {
    return Status();
  }
  if (!asked.has_value() &&
      !wide_warps_pay(d->token_tiles,
                      warp_split_warp_stream_bytes(g.k_blocks, d->splits, g.block_bytes()))) {
    return Status();
  }
  DecodePlan wide = *d;
  wide.warps = kWarpSplitWideWarps;
  wide.warp_stages = kStages;
  wide.spread_ctas = 0;
  wide.shared_bytes = wide.warps * warp_split_region_bytes(wide.warp_stage_bytes, kStages) +
                      (d->cluster_push ? cluster_receive_bytes(d->splits, d->token_tiles) : 0);
  int before = 0, after = 0;
  SF_RETURN_IF_ERROR(q.ctas_per_sm(*d, &before));
  SF_RETURN_IF_ERROR(q.ctas_per_sm(wide, &after));
  if (after < 1) return Status();
  const int64_t grid_ctas = warp_split_grid_ctas(g, *d);
  const auto waves = [&](int ctas_per_sm) {
    const int64_t slots = std::max<int64_t>(int64_t(plan->sm_count) * ctas_per_sm, 1);
    return (grid_ctas + slots - 1) / slots;
  };
  if (!asked.has_value() && waves(after) > waves(before)) return Status();
  if (d->epilogue == static_cast<int>(Epilogue::kCluster)) {
    ClusterResidency residency;
    SF_RETURN_IF_ERROR(cluster_residency(q, *d, wide, grid_ctas / d->splits, &residency));
    if (residency.after < 1 || (!asked.has_value() && !residency.kept)) return Status();
  }
  *d = wide;
  return Status();
}

// Whether grid_placement.h's spread_pays pads plan d by default: its grid, and the weight bytes a
// warp streams (a Stream-K warp's run of its cluster's strips).
bool warp_split_spread_pays(const PackedGeometry& g, const DecodePlan& d, int sm_count) {
  const int64_t strips = d.stream_k_strips > 0 ? d.stream_k_strips : 1;
  return spread_pays(
      warp_split_grid_ctas(g, d), sm_count,
      warp_split_warp_stream_bytes(strips * g.k_blocks, d.splits, g.block_bytes(), d.warps));
}

// The warp-split plan *d with its shared memory padded so that an SM holds at most the grid's
// even share of its CTAs, ceil(CTAs / SMs) (grid_placement.h, spread_shared_bytes), where it would
// hold more and the padding fits a CTA: wherever `always`, else where spread_pays. The padding is
// checked with the occupancy query; where that still allows more (allocation granularity), 128
// bytes more are tried, a few times, before the plan is left as it was. So is a cluster plan whose
// clusters would no longer all be resident at once.
Status spread_over_sms(const DeviceQueries& q, const Plan* plan, bool always, DecodePlan* d) {
  const Problem& p = plan->problem;
  const int64_t grid_ctas = warp_split_grid_ctas(p.geometry, *d);
  if (!always && !warp_split_spread_pays(p.geometry, *d, plan->sm_count)) return Status();
  const int64_t share = busiest_sm_ctas(grid_ctas, plan->sm_count);
  int ctas_per_sm = 0;
  SF_RETURN_IF_ERROR(q.ctas_per_sm(*d, &ctas_per_sm));
  if (ctas_per_sm <= share) return Status();
  const int padded = spread_shared_bytes(d->shared_bytes, static_cast<int>(share), q.smem_per_sm,
                                         q.reserved_smem_per_block);
  if (padded == 0) return Status();
  DecodePlan spread = *d;
  spread.spread_ctas = static_cast<int>(share);
  for (int extra = 0; extra < 4 * 128 && padded + extra <= kMaxLaunchSharedBytes; extra += 128) {
    spread.shared_bytes = padded + extra;
    SF_RETURN_IF_ERROR(q.ctas_per_sm(spread, &ctas_per_sm));
    if (ctas_per_sm < share) return Status();  // the padding took more than asked: keep the plan
    if (ctas_per_sm > share) continue;
    if (d->epilogue == static_cast<int>(Epilogue::kCluster)) {
      ClusterResidency residency;
      SF_RETURN_IF_ERROR(cluster_residency(q, *d, spread, grid_ctas / d->splits, &residency));
      if (!residency.kept) return Status();
    }
    *d = spread;
    return Status();
  }
  return Status();
}

// The plan's last choices, each on the plan the ones before it left: Stream-K, the cluster push
// form, the wide instance, then the spread padding: not where `spread` is false, wherever an SM
// would hold more than the share where it is true or pad_quads, else where spread_pays. Then the
// CTAs an SM holds of the plan as it stands (DecodePlan::resident_ctas).
Status finish_plan(const DecodeChoices& choices, bool stages_forced, std::optional<bool> spread,
                   bool pad_quads, const DeviceQueries& q, const Plan* plan, DecodePlan* d) {
  SF_RETURN_IF_ERROR(choose_stream_k(choices, stages_forced, q, plan, d));
  SF_RETURN_IF_ERROR(choose_cluster_push(choices.cluster_push, q, plan, d));
  SF_RETURN_IF_ERROR(choose_wide_warps(choices.wide_warps, stages_forced, q, plan, d));
  if (spread.value_or(true)) {
    SF_RETURN_IF_ERROR(spread_over_sms(q, plan, spread.has_value() || pad_quads, d));
  }
  return q.ctas_per_sm(*d, &d->resident_ctas);
}

}  // namespace

Status plan_decode(const DecodeChoices& choices, const DeviceQueries& q, Plan* plan) {
  const std::optional<int64_t>& forced_splits = choices.splits;
  const std::optional<int64_t>& forced_stages = choices.warp_stages;
  const bool cluster_reduce = choices.cluster_reduce;
  const Problem& p = plan->problem;
  const PackedGeometry& g = p.geometry;
  if (p.m > kDecodeMaxM) {
    return unsupported("the decode tier serves m <= ", kDecodeMaxM,
                       " (65535 CTAs along M, the grid's z limit, of 64 tokens); m is ", p.m,
                       ": use the prefill or dense tier (tier auto sends large m there)");
  }
  // A forced depth is capped at the k-blocks, and its splits are the grid's y dimension, which
  // CUDA caps at 65535: a weight of more k-blocks (k past 4194240) could be forced past it into a
  // plan whose every launch fails.
  if (forced_splits.has_value() && std::min<int64_t>(*forced_splits, g.k_blocks) > kMaxGridYZ) {
    return invalid_argument("decode_splits is ", *forced_splits, " and the weight has ", g.k_blocks,
                            " k-blocks; the decode grid holds 1 to ", kMaxGridYZ,
                            " splits (CUDA's grid y dimension)");
  }
  DecodePlan d;
  d.token_tiles = token_tiles_for(std::min<int64_t>(std::max<int64_t>(p.m, 1), 64));
  const int64_t tokens_per_cta = int64_t(d.token_tiles) * kTokensPerTile;
  d.m_groups = static_cast<int>((std::max<int64_t>(p.m, 1) + tokens_per_cta - 1) / tokens_per_cta);
  d.warp_split = choices.warp_split && d.token_tiles <= kWarpSplitMaxTiles;
  d.warps = kWarpSplitWarps;  // choose_wide_warps may take the wide instance
  const bool zero_points = p.zero_kind != ZeroPointKind::kNone;
  if (d.warp_split) {
    // Stages hold only what this problem reads: its activation rows, its scale rows (and zero
    // shifts and folds).
    d.act_rows = static_cast<int>(std::min<int64_t>(std::max<int64_t>(p.m, 1), tokens_per_cta));
    d.warp_stage_bytes = warp_split_stage_bytes(g.bits, d.act_rows,
                                                meta_rows_for(::sailfish::detail::group_shift(g)),
                                                zero_points);
  } else {
    d.shared_bytes = shared_bytes(g.bits, d.token_tiles);
  }
  // The warp-split kernel's stages per warp (warp_split_instances.h), planned at kStages first:
  //   - 3-4 token tiles: three where the four-stage plan ends without the cluster epilogue (one
  //     split, or the reduce kernel), where the grid has CTAs to spare for another CTA per SM, and
  //     the three-stage plan does not end on the reduce kernel itself (l3-70b.o at M = 17: three
  //     stages, 4 splits and the reduce kernel ran 25.3 us, against 18.1 at M = 24 with four
  //     stages and clusters);
  //   - 1-2 token tiles (int8: 1; warp_split_instances.h, warp_split_has_deep): the deep instance
  //     where the four-stage plan leaves the SMs short of bytes in flight: its grid has no more
  //     CTAs than SMs (l3-8b.o), or it ends on the reduce kernel and the deep plan, holding fewer
  //     CTAs an SM and so fewer splits, on the cluster epilogue (l3-70b.o at M = 16: 3 splits and
  //     the reduce kernel, 16.8 us, against 2 clustered splits of 6 stages, 14.8; at two tiles,
  //     where a warp's share is short, two clustered splits of four stages, spread, where their
  //     grid spreads: warp_split_instances.h, pair_warps_are_short); or its grid is uneven
  //     (warp_split_instances.h, warp_split_grid_uneven: l3-8b.qkv) and the deep plan keeps that
  //     grid in one wave. Elsewhere the deep plan lost up to 32% (v13b in docs/perf/decode.md),
  //     and up to 21% on grids its fewer CTAs an SM took to a second wave (v42d). int8 at one tile
  //     has a lighter deep depth too, taken where it sits better on the SMs (one wave, room for
  //     the next launch's CTAs) or, bf16, the deepest keeps too many bytes in flight
  //     (warp_split_lighter_deep_pays).
  // A forced count the kernel for this M is not built with is ignored (a sweep forces one count
  // over every M).
  const auto grid_ctas = [&g](const DecodePlan& candidate) {
    return warp_split_grid_ctas(g, candidate);
  };
  // A plan as choose_cluster_push will launch it (at most): with the push form's receive area
  // where it ends on clusters at 1-2 token tiles and the push form is not turned off.
  const auto as_launched = [&choices](const DecodePlan& candidate) {
    const bool may_push = choices.cluster_push.value_or(true) &&
                          candidate.epilogue == static_cast<int>(Epilogue::kCluster) &&
                          candidate.token_tiles <= kClusterPushMaxTiles;
    return may_push ? with_receive_area(candidate, candidate.splits) : candidate;
  };
  auto choose = [&](int stages, bool pair_fallback = false) {
    if (d.warp_split) {
      d.warp_stages = stages;
      d.shared_bytes = d.warps * warp_split_region_bytes(d.warp_stage_bytes, stages);
    }
    return choose_splits_and_epilogue(forced_splits, cluster_reduce, pair_fallback, q, plan, &d);
  };
  const bool stages_vary = d.warp_split && warp_split_stages_vary(d.token_tiles);
  const bool has_deep = d.warp_split && warp_split_has_deep(g.bits, d.token_tiles);
  const int lighter_deep =
      d.warp_split ? warp_split_lighter_deep_stages(g.bits, d.token_tiles) : 0;
  const bool stages_forced =
      forced_stages.has_value() &&
      ((stages_vary && (*forced_stages == kWarpSplitFewStages || *forced_stages == kStages)) ||
       (has_deep && (*forced_stages == warp_split_deep_stages(d.token_tiles) ||
                     *forced_stages == kStages ||
                     (lighter_deep > 0 && *forced_stages == lighter_deep))));
  Status chosen = choose(stages_forced ? static_cast<int>(*forced_stages) : kStages);
  const auto ends_on = [&d](Epilogue e) { return d.epilogue == static_cast<int>(e); };
  if (chosen.ok() && stages_vary && !stages_forced && !ends_on(Epilogue::kCluster)) {
    const DecodePlan four = d;
    Status fewer = choose(kWarpSplitFewStages);
    if (fewer.ok() && ends_on(Epilogue::kPartials)) d = four;
    std::swap(chosen, fewer);
  } else if (chosen.ok() && has_deep && !stages_forced) {
    const bool few_ctas = grid_ctas(d) <= plan->sm_count;
    const bool four_partials = ends_on(Epilogue::kPartials);
    const bool uneven = warp_split_grid_uneven(grid_ctas(d), plan->sm_count);
    if (few_ctas || four_partials || uneven) {
      const DecodePlan four = d;
      const Status deep = choose(warp_split_deep_stages(d.token_tiles));
      bool keep = deep.ok() && (few_ctas || (four_partials && ends_on(Epilogue::kCluster)));
      if (deep.ok() && !keep && uneven && grid_ctas(d) == grid_ctas(four) &&
          d.epilogue == four.epilogue) {
        // warp_split_instances.h, warp_split_grid_uneven: the same grid, if it still fits one wave.
        int ctas_per_sm = 0;
        Status occupancy = q.ctas_per_sm(as_launched(d), &ctas_per_sm);
        std::swap(chosen, occupancy);
        keep = chosen.ok() &&
               warp_split_residency(grid_ctas(d), plan->sm_count, ctas_per_sm) >= 1;
      }
      if (keep && four_partials && !few_ctas && d.token_tiles == 2 &&
          choices.spread.value_or(true) && pair_warps_are_short(g.k_blocks)) {
        // warp_split_instances.h, pair_warps_are_short: short warps run two clustered splits of
        // four stages, spread, faster than the deep plan, where that pair's grid spreads.
        const DecodePlan deep_plan = d;
        d = four;
        const Status pairs = choose(kStages, true);
        const bool spread_pair = pairs.ok() && ends_on(Epilogue::kCluster) && d.splits == 2 &&
                                 warp_split_spread_pays(g, d, plan->sm_count);
        if (!spread_pair) d = deep_plan;
      }
      if (!keep) {
        d = four;
      } else if (lighter_deep > 0) {
        // warp_split_instances.h, warp_split_lighter_deep_pays: one stage fewer where that plan
        // sits better on the SMs or (bf16) the deepest keeps too many bytes in flight, if it ends
        // the same way.
        const DecodePlan deepest = d;
        const Status lighter = choose(lighter_deep);
        int deepest_ctas = 0, lighter_ctas = 0;
        const auto query = [&]() -> Status {
          SF_RETURN_IF_ERROR(q.ctas_per_sm(as_launched(deepest), &deepest_ctas));
          return q.ctas_per_sm(as_launched(d), &lighter_ctas);
        };
        Status occupancy = lighter.ok() ? query() : Status();
        std::swap(chosen, occupancy);
        if (!lighter.ok() || !chosen.ok() || d.epilogue != deepest.epilogue ||
            !warp_split_lighter_deep_pays(grid_ctas(deepest), deepest_ctas, grid_ctas(d),
                                          lighter_ctas, plan->sm_count, deepest.warp_stages,
                                          deepest.warp_stage_bytes,
                                          p.act_dtype != DType::kF16)) {
          d = deepest;
        }
      }
    }
  }
  // One token tile, still ending on the reduce kernel: two clustered splits where their grid
  // covers every SM (split_depth.h, cluster_split_count). At two token tiles only where the pairs'
  // grid is then spread over the SMs (grid_placement.h, spread_pays; below): unspread, two
  // clustered splits ran 1.09-1.31x the reduce kernel's plan (l3-70b.o, l3-70b.down at M = 16,
  // v13c), since three CTAs an SM fit where the grid's share is two; spread, l3-70b.o at M = 9-12
  // ran 0.82x and l3-70b.down 0.96x the reduce kernel's three splits (v46). There the pair runs the
  // deep depth where its warps are long (warp_split_instances.h, pair_warps_are_short; v47). At one
  // token tile the fallback may take four clustered splits where the pairs sit unevenly
  // (split_depth.h, quad_fallback_pays). Their gain is the even placement that rule counts, so
  // their grid is padded to its share whatever spread_pays says: unpadded, q32.down's 320 CTAs at
  // four an SM ran 1.03x the pairs' time, padded to three 0.83x (v51).
  bool pad_quads = false;
  const std::optional<bool> spread = d.warp_split ? choices.spread : std::optional<bool>(false);
  if (chosen.ok() && ends_on(Epilogue::kPartials) &&
      (d.token_tiles == 1 || (d.token_tiles == 2 && spread.value_or(true)))) {
    const DecodePlan before = d;
    const bool deep_pair = d.token_tiles == 2 && has_deep && !stages_forced &&
                           !pair_warps_are_short(g.k_blocks);
    const Status pairs =
        choose(deep_pair ? warp_split_deep_stages(d.token_tiles) : d.warp_stages, true);
    const bool spreads = spread.value_or(false) || warp_split_spread_pays(g, d, plan->sm_count);
    if (!pairs.ok() || !ends_on(Epilogue::kCluster) || (d.token_tiles == 2 && !spreads)) {
      d = before;
    }
    pad_quads = d.token_tiles == 1 && ends_on(Epilogue::kCluster) && d.splits == 4;
  }
  SF_RETURN_IF_ERROR(chosen);
  SF_RETURN_IF_ERROR(finish_plan(choices, stages_forced, spread, pad_quads, q, plan, &d));
  // The main kernel reads activations as 16-byte chunks of 8 columns: rows must be 16-byte
  // aligned (k % 8 == 0) and act-order needs them permuted; otherwise the prep kernel copies.
  // The warp-split kernel's lean loop also reads whole 64-column blocks (no K tail test), so it
  // takes the copy, zero-padded to k_pad, where k is not a multiple of 64 (tile_shapes.h).
  const bool whole_blocks = d.warp_split && warp_split_reads_whole_blocks(d.token_tiles);
  d.copy_activations = p.act_order || g.k % 8 != 0 || (whole_blocks && g.k % 64 != 0);
  size_t offset = 0;
  d.activation_offset = offset;
  if (d.copy_activations) offset = align_up(offset + size_t(p.m) * g.k_pad * 2, 256);
  d.partials_offset = offset;
  if (d.epilogue == static_cast<int>(Epilogue::kPartials)) {
    const int64_t m_pad = int64_t(d.m_groups) * tokens_per_cta;
    offset = align_up(offset + size_t(d.splits) * m_pad * g.n_pad * 4, 256);
  }
  plan->decode = d;
  plan->workspace_bytes = offset;
  return Status();
}

Status cuda_device_queries(const Problem& problem, int device, DeviceQueries* q) {
  SF_CUDA_CHECK(
      cudaDeviceGetAttribute(&q->compute_major, cudaDevAttrComputeCapabilityMajor, device));
  SF_CUDA_CHECK(cudaDeviceGetAttribute(&q->smem_per_sm,
                                       cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  SF_CUDA_CHECK(cudaDeviceGetAttribute(&q->reserved_smem_per_block,
                                       cudaDevAttrReservedSharedMemoryPerBlock, device));
  q->ctas_per_sm = [&problem](const DecodePlan& d, int* ctas) {
    return cuda_ctas_per_sm(problem, d, ctas);
  };
  q->max_clusters = [&problem](const DecodePlan& d, int size, int* clusters) {
    return cuda_max_clusters(problem, d, size, clusters);
  };
  return Status();
}

Status plan_decode(const DecodeChoices& choices, Plan* plan) {
  int current = 0;
  SF_CUDA_CHECK(cudaGetDevice(&current));
  SF_CUDA_CHECK(cudaSetDevice(plan->device));  // the occupancy queries read the current device
  const Status planned = [&]() -> Status {
    DeviceQueries q;
    SF_RETURN_IF_ERROR(cuda_device_queries(plan->problem, plan->device, &q));
    return plan_decode(choices, q, plan);
  }();
  SF_CUDA_CHECK(cudaSetDevice(current));
  return planned;
}

namespace {

template <typename T>
Status run_typed(const Plan& plan, const RunArgs& args, void* workspace, cudaStream_t stream) {
  const Problem& p = plan.problem;
  const PackedGeometry& g = p.geometry;
  const DecodePlan& d = plan.decode;
  const DeviceWeight& w = *args.weight;
  char* ws = static_cast<char*>(workspace);
  const int m = static_cast<int>(p.m);
  const int m_pad = d.m_groups * d.token_tiles * kTokensPerTile;
  const bool pdl = plan.programmatic_dependent_launch;

  const void* a = args.a;
  int64_t lda = g.k;
  if (d.copy_activations || d.init_output) {
    const PrepParams prep =
        make_prep_params(args, g, p.m, d.copy_activations ? ws + d.activation_offset : nullptr,
                         d.init_output ? args.y : nullptr);
    SF_RETURN_IF_ERROR(
        launch_prep<T>(prep, plan.sm_count, pdl, stream, "decode prep_kernel launch"));
    if (d.copy_activations) {
      a = prep.a_out;
      lda = g.k_pad;
    }
  }
  if (reinterpret_cast<uintptr_t>(a) % 16 != 0) {
    return invalid_argument("run: the decode tier reads activations in 16-byte vectors; A must be "
                            "16-byte aligned (cudaMalloc memory is)");
  }

  DecodeParams params;
  params.codes = static_cast<const uint8_t*>(w.codes);
  params.scales = w.scales;
  const ::sailfish::detail::ZeroPlanes zero = ::sailfish::detail::zero_planes(w);
  params.zero_shift = zero.shifts;
  params.zero_fold = zero.folds;
  params.a = a;
  params.lda = lda;
  params.y = args.y;
  params.bias = d.epilogue == static_cast<int>(Epilogue::kStore) ||
                        d.epilogue == static_cast<int>(Epilogue::kCluster)
                    ? args.bias
                    : nullptr;
  params.partials = reinterpret_cast<float*>(ws + d.partials_offset);
  params.m = m;
  params.n = static_cast<int>(g.n);
  params.k = static_cast<int>(g.k);
  params.k_blocks = static_cast<int>(g.k_blocks);
  params.n_pad = static_cast<int>(g.n_pad);
  params.m_pad = m_pad;
  params.group_shift = ::sailfish::detail::group_shift(g);
  params.splits = d.splits;
  params.epilogue = static_cast<Epilogue>(d.epilogue);
  params.warp_stage_bytes = d.warp_stage_bytes;
  params.act_rows = d.act_rows;
  params.warp_stages = d.warp_stages;
  params.stream_k_strips = d.stream_k_strips;
  params.cluster_push = d.cluster_push ? 1 : 0;
  // Split grid: (strip, split, M group). Stream-K: (cluster of stream_k_strips strips, rank, M
  // group).
  const int64_t strip_groups =
      d.stream_k_strips > 0 ? (g.n_blocks + d.stream_k_strips - 1) / d.stream_k_strips
                            : g.n_blocks;
  const dim3 grid(static_cast<unsigned>(strip_groups), static_cast<unsigned>(d.splits),
                  static_cast<unsigned>(d.m_groups));
  SF_RETURN_IF_ERROR(launch_for<T>(g.bits, params, d, grid, pdl, stream));

  if (params.epilogue == Epilogue::kPartials) {
    ReduceParams reduce;
    reduce.partials = params.partials;
    reduce.splits = d.splits;
    reduce.n_pad = params.n_pad;
    reduce.m_pad = m_pad;
    reduce.m = m;
    reduce.n = params.n;
    reduce.bias = args.bias;
    reduce.y = args.y;
    SF_RETURN_IF_ERROR(gpu::launch(reduce_kernel<T>, reduce_grid(p.m, g.n), dim3(kReduceThreads),
                                   0, stream, pdl, "decode reduce_kernel launch", reduce));
  }
  return Status();
}

}  // namespace

Status run_decode(const Plan& plan, const RunArgs& args, void* workspace, cudaStream_t stream) {
  if (plan.decode.moe) {
    return invalid_argument("run: this plan is a MoE expert GEMM's (plan_moe); it runs through "
                            "run_moe, which supplies the sorted blocks");
  }
  return plan.problem.act_dtype == DType::kF16
             ? run_typed<__half>(plan, args, workspace, stream)
             : run_typed<__nv_bfloat16>(plan, args, workspace, stream);
}

}  // namespace sailfish::decode
