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
# shellcheck source=ncu_decode_lib.sh
source "$root/scripts/perf/ncu_decode_lib.sh"
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
for shape in ${NCU_SHAPES:-l3-8b.o}; do
  for n in ${NCU_STAGES:-5 6}; do
    # shellcheck disable=SC2086  # NCU_ARGS is a word list by design
    SAILFISH_DECODE_WARP_STAGES=$n ncu_warp_split "$out/${shape}_w$n.log" "$bench" "$metrics" \
      --shapes "$shape" ${NCU_ARGS:---bits 8 -m 8}
    echo "$shape w$n rc=$? ${SECONDS}s"
  done
done
keys="decode_warp_split_kernel<|Duration|Elapsed Cycles|shared_mem_config|Achieved Occupancy"
keys+="|Registers Per|Dynamic Shared|Warp Cycles Per Issued|No Eligible|Issued Warp Per"
keys+="|long_scoreboard|short_scoreboard|inst_executed.sum|bank_conflicts|Block Limit"
keys+="|DRAM Throughput|L2 Cache Throughput|Memory Throughput|Theoretical Occupancy"
ncu_summary "$out" "$keys"
