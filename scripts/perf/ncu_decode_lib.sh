# Sourced by scripts/perf/ncu_*.sh: one Nsight Compute profile of the first decode warp-split
# kernel of a bench launch, and the summary lines of a folder of such logs.
ncu_decode_sections=()
for section in SpeedOfLight MemoryWorkloadAnalysis WarpStateStats Occupancy LaunchStats \
  SchedulerStats; do
  ncu_decode_sections+=(--section "$section")
done

# ncu_warp_split LOG BENCH METRICS BENCH_ARGS...: one launch of the bench rows BENCH_ARGS pick,
# no baseline, no check; the first warp-split kernel profiled with METRICS besides the sections.
ncu_warp_split() {
  local log=$1 bench=$2 metrics=$3
  shift 3
  timeout 120 ncu -k regex:decode_warp_split_kernel -c 1 "${ncu_decode_sections[@]}" \
    --metrics "$metrics" "$bench" "$@" --tiers decode --no-cublas --replays 1 --warmup 0 \
    --graph-launches 1 --check-samples 0 > "$log" 2>&1
}

# ncu_summary DIR KEYS: each DIR/*.log's lines that match the extended regex KEYS.
ncu_summary() {
  local f
  for f in "$1"/*.log; do
    echo "== $f"
    grep -E "$2" "$f" | sed 's/  */ /g' | cut -c1-120
  done
}
