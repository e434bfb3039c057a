#!/usr/bin/env bash
# Nsight Compute of the decode warp-split kernel at forced stage counts on one default build, on a
# GPU host: for each shape in NCU_SHAPES and count in NCU_STAGES, the first kernel of one bench
# launch with SAILFISH_DECODE_WARP_STAGES set (decode v42: int8 at one token tile, six stages
# against five). NCU_ARGS: the bench arguments besides the shape; NCU_BENCH: a bench binary already
# built (else one is built). Logs: $OUT/n/.
#   NCU_SHAPES="l3-8b.o" NCU_STAGES="5 6" NCU_ARGS="--bits 8 -m 8" scripts/perf/ncu_forced_stages.sh
set -u
# shellcheck source=scripts/perf/ncu_decode_lib.sh
source "$(dirname "$0")/ncu_decode_lib.sh"
builds=/tmp/sailfish-forced-stages
bench=${NCU_BENCH:-$builds/base/bench/sailfish_bench}
[ -n "${NCU_BENCH:-}" ] || ncu_build_variants "$builds" base=
metrics=$ncu_stall_metrics,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
for shape in ${NCU_SHAPES:-l3-8b.o}; do
  for n in ${NCU_STAGES:-5 6}; do
    # shellcheck disable=SC2086  # NCU_ARGS is a word list by design
    SAILFISH_DECODE_WARP_STAGES=$n ncu_warp_split "$ncu_out/${shape}_w$n.log" "$bench" "$metrics" \
      --shapes "$shape" ${NCU_ARGS:---bits 8 -m 8}
    echo "$shape w$n rc=$? ${SECONDS}s"
  done
done
keys="decode_warp_split_kernel<|Duration|Elapsed Cycles|shared_mem_config|Achieved Occupancy"
keys+="|Registers Per|Dynamic Shared|Warp Cycles Per Issued|No Eligible|Issued Warp Per"
keys+="|long_scoreboard|short_scoreboard|inst_executed.sum|bank_conflicts|Block Limit"
keys+="|DRAM Throughput|L2 Cache Throughput|Memory Throughput|Theoretical Occupancy"
ncu_summary "$ncu_out" "$keys"
