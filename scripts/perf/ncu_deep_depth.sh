#!/usr/bin/env bash
# Nsight Compute of the two-token-tile deep instance at five stages (landed) and six
# (-DSAILFISH_DECODE_DEEP_STAGES_TWO_TILES=6) on l3-70b.down and l3-8b.o at M = 16, on a GPU
# host (decode v41: why the shallower ring runs faster on the same grid). Logs: $OUT/n/.
set -u
# shellcheck source=scripts/perf/ncu_decode_lib.sh
source "$(dirname "$0")/ncu_decode_lib.sh"
builds=/tmp/sailfish-deep-depth
ncu_build_variants "$builds" w5= w6=-DSAILFISH_DECODE_DEEP_STAGES_TWO_TILES=6
metrics=$ncu_stall_metrics,l1tex__t_sector_hit_rate.pct,smsp__cycles_active.avg
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
for shape in l3-70b.down l3-8b.o; do
  for n in w5 w6; do
    ncu_warp_split "$ncu_out/${shape}_$n.log" "$builds/$n/bench/sailfish_bench" "$metrics" \
      --shapes "$shape" -m 16
    echo "$shape $n rc=$? ${SECONDS}s"
  done
done
keys="decode_warp_split_kernel<|Duration|Elapsed Cycles|L1/TEX Hit Rate|shared_mem_config"
keys+="|Achieved Occupancy|Registers Per|Dynamic Shared|Warp Cycles Per Issued|No Eligible"
keys+="|Issued Warp Per|long_scoreboard|short_scoreboard|inst_executed.sum|wavefronts_mem_shared"
keys+="|Block Limit Shared"
ncu_summary "$ncu_out" "$keys"
