#!/usr/bin/env bash
# Nsight Compute of the decode warp-split kernel at forced stage counts on one default build, on a
# GPU host: for each shape in NCU_SHAPES and count in NCU_STAGES, the first kernel of one bench
# launch with SAILFISH_DECODE_WARP_STAGES set (decode v42: int8 at one token tile, six stages
# against five). NCU_ARGS: the bench arguments besides the shape; NCU_BENCH: a bench binary already
# built (else one is built). Logs: $OUT/n/.
#   NCU_SHAPES="l3-8b.o" NCU_STAGES="5 6" NCU_ARGS="--bits 8 -m 8" scripts/perf/ncu_forced_stages.sh
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/out}/n
builds=/tmp/sailfish-forced-stages
mkdir -p "$out"
bench=${NCU_BENCH:-$builds/base/bench/sailfish_bench}
if [ -z "${NCU_BENCH:-}" ]; then
  # An empty spec: scripts/device_variant_rounds.sh only builds (its logs beside the build).
  OUT=$builds VARIANT_BUILD_ROOT=$builds "$root/scripts/device_variant_rounds.sh" /dev/null base=
fi
metrics=sm__cycles_elapsed.max,smsp__inst_executed.sum,launch__shared_mem_config_size
metrics+=,smsp__average_warp_latency_issue_stalled_long_scoreboard
metrics+=,smsp__average_warp_latency_issue_stalled_barrier
metrics+=,smsp__average_warp_latency_issue_stalled_short_scoreboard
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
sections=()
for s in SpeedOfLight MemoryWorkloadAnalysis WarpStateStats Occupancy LaunchStats SchedulerStats; do
  sections+=(--section "$s")
done
for shape in ${NCU_SHAPES:-l3-8b.o}; do
  for n in ${NCU_STAGES:-5 6}; do
    # shellcheck disable=SC2086  # NCU_ARGS is a word list by design
    SAILFISH_DECODE_WARP_STAGES=$n timeout 120 ncu -k regex:decode_warp_split_kernel -c 1 \
      "${sections[@]}" --metrics "$metrics" "$bench" --shapes "$shape" \
      ${NCU_ARGS:---bits 8 -m 8} --tiers decode --no-cublas --replays 1 --warmup 0 \
      --graph-launches 1 --check-samples 0 > "$out/${shape}_w$n.log" 2>&1
    echo "$shape w$n rc=$? ${SECONDS}s"
  done
done
keys="decode_warp_split_kernel<|Duration|Elapsed Cycles|shared_mem_config|Achieved Occupancy"
keys+="|Registers Per|Dynamic Shared|Warp Cycles Per Issued|No Eligible|Issued Warp Per"
keys+="|long_scoreboard|short_scoreboard|inst_executed.sum|bank_conflicts|Block Limit"
keys+="|DRAM Throughput|L2 Cache Throughput|Memory Throughput|Theoretical Occupancy"
for f in "$out"/*.log; do
  echo "== $f"
  grep -E "$keys" "$f" | sed 's/  */ /g' | cut -c1-120
done
