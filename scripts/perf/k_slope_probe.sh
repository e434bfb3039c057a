#!/usr/bin/env bash
# Where a one-wave decode launch spends its time beyond the floor (v49, docs/perf/decode.md): the
# same plan (two clustered splits, four stages, spread) at K = 14336-57344 on N = 8192, so the
# time splits into a per-k-block slope (the steady loop) and a fixed part (prologue, ramp,
# epilogue), each beside the floor's; then Nsight Compute on l3-70b.down and l3-70b.gate_up at
# M = 1 (1.08x and 1.04x their floors in v47). JSON and logs in $OUT.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/out}
bench=${BENCH:-$root/build/bench/sailfish_bench}
mkdir -p "$out"
shapes=k14=14336x8192,k28=28672x8192,k43=43008x8192,k57=57344x8192
SAILFISH_DECODE_SPLITS=2 SAILFISH_DECODE_WARP_STAGES=4 timeout 300 "$bench" --tiers decode \
  --no-cublas -m 1,16 --shapes "$shapes" --json "$out/kslope_s2w4.json" > "$out/kslope_s2w4.log" 2>&1
echo "kslope s2w4: rc=$?"
timeout 300 "$bench" --tiers decode --no-cublas -m 1,16 --shapes "$shapes" \
  --json "$out/kslope_auto.json" > "$out/kslope_auto.log" 2>&1
echo "kslope auto: rc=$?"
if [ "${NCU:-1}" = 1 ]; then
  # shellcheck source=scripts/perf/ncu_decode_lib.sh
  source "$root/scripts/perf/ncu_decode_lib.sh"
  metrics=$ncu_stall_metrics,smsp__cycles_active.avg,dram__throughput.avg.pct_of_peak_sustained_elapsed
  for shape in l3-70b.down l3-70b.gate_up; do
    ncu_warp_split "$ncu_out/${shape}_m1.log" "$bench" "$metrics" --shapes "$shape" -m 1
    echo "ncu $shape: rc=$?"
  done
fi
