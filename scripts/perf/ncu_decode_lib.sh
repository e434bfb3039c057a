# shellcheck shell=bash
# Sourced by scripts/perf/ncu_*.sh: one Nsight Compute profile of the first decode warp-split
# kernel of a bench launch, and the summary lines of a folder of such logs. Sets root (the
# checkout), ncu_out ($OUT/n, created) and ncu_stall_metrics (the metrics every such profile
# takes: cycles, instructions, the shared-memory carveout and three stall latencies).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ncu_out=${OUT:-$root/out}/n
mkdir -p "$ncu_out"
ncu_stall_metrics=sm__cycles_elapsed.max,smsp__inst_executed.sum,launch__shared_mem_config_size
ncu_stall_metrics+=,smsp__average_warp_latency_issue_stalled_long_scoreboard
ncu_stall_metrics+=,smsp__average_warp_latency_issue_stalled_barrier
ncu_stall_metrics+=,smsp__average_warp_latency_issue_stalled_short_scoreboard
ncu_decode_sections=()
for section in SpeedOfLight MemoryWorkloadAnalysis WarpStateStats Occupancy LaunchStats \
  SchedulerStats; do
  ncu_decode_sections+=(--section "$section")
done

# ncu_warp_split LOG BENCH METRICS BENCH_ARGS...: one launch of the bench rows BENCH_ARGS pick,
# no baseline, no check; the first warp-split kernel profiled with METRICS besides the sections.
# NCU_CLOCK_CONTROL: ncu's --clock-control (default base, ncu's own: clocks locked at base; none
# keeps the boost clock the bench runs at).
ncu_warp_split() {
  local log=$1 bench=$2 metrics=$3
  shift 3
  timeout 120 ncu --clock-control "${NCU_CLOCK_CONTROL:-base}" -k regex:decode_warp_split_kernel \
    -c 1 "${ncu_decode_sections[@]}" \
    --metrics "$metrics" "$bench" "$@" --tiers decode --no-cublas --replays 1 --warmup 0 \
    --graph-launches 1 --check-samples 0 > "$log" 2>&1
}

# ncu_build_variants BUILDS NAME=CUDA_FLAGS...: one bench build per variant in BUILDS/NAME, by
# scripts/device_variant_rounds.sh with an empty spec (it then only builds; its logs in BUILDS).
ncu_build_variants() {
  local builds=$1
  shift
  OUT=$builds VARIANT_BUILD_ROOT=$builds "$root/scripts/device_variant_rounds.sh" /dev/null "$@"
}

# ncu_summary DIR KEYS: each DIR/*.log's lines that match the extended regex KEYS.
ncu_summary() {
  local f
  for f in "$1"/*.log; do
    echo "== $f"
    grep -E "$2" "$f" | sed 's/  */ /g' | cut -c1-120
  done
}
