#!/usr/bin/env bash
# Does the activation stream bound the decode warp-split kernel at two token tiles (M = 9-16)?
# On a GPU host, one default build: (1) the decode tier at M = 1, 2, 4, 8, 9, 12, 16 on
# PROBE_SHAPES, no baseline; within one token tile (M = 1-8) and within two (M = 9-16) the
# instructions are the same and only the activation rows copied (bytes from L2) grow with M;
# (2) Nsight Compute of one launch of l3-70b.gate_up at M = PROBE_NCU_M, with the L2 and DRAM
# bytes and throughputs. Logs and JSON in $OUT (or out/), a table printed last.
#   scripts/perf/activation_bytes_probe.sh
set -u
# shellcheck source=scripts/perf/ncu_decode_lib.sh
source "$(dirname "$0")/ncu_decode_lib.sh"
out=${OUT:-$root/out}
bench=${PROBE_BENCH:-$root/build/bench/sailfish_bench}
shapes=${PROBE_SHAPES:-l3-70b.gate_up,l3-70b.down,l3-8b.gate_up,l3-70b.o}
timeout 300 "$bench" --tiers decode --no-cublas --shapes "$shapes" -m 1,2,4,8,9,12,16 \
  --json "$out/act_bytes.json" > "$out/act_bytes.log" 2>&1
echo "act_bytes bench: rc=$? ${SECONDS}s"
metrics=$ncu_stall_metrics,lts__t_bytes.sum,dram__bytes_read.sum
metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active
for m in ${PROBE_NCU_M:-8 9 16}; do
  ncu_warp_split "$ncu_out/gate_up_m$m.log" "$bench" "$metrics" --shapes l3-70b.gate_up -m "$m"
  echo "ncu gate_up M=$m: rc=$? ${SECONDS}s"
done
keys="Duration|lts__|dram__|sm__cycles|inst_executed.sum|pipe_alu|issue_active|Registers Per"
ncu_summary "$ncu_out" "$keys"
python3 - "$out/act_bytes.json" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
print("| shape | M | us | launch | floor us | % roofline | x floor |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    if r.get("us") is None:
        print(f"| {r['shape']} | {r['M']} | {r['status']} | | | | |")
        continue
    print(f"| {r['shape']} | {r['M']} | {r['us']:.2f} | {r['launch']} | {r['floor_us']:.2f} "
          f"| {r['pct_roofline']:.1f} | {r['ratio_to_floor']:.2f} |")
EOF
