#!/usr/bin/env bash
# Stop 72's second device call (perf/decode.md, v55, "Stop 72"): why v55's shorter bf16 int8 loop
# runs the int8 target row (l3-70b.o, M = 1) 2% slower on the H200 while the long-K row with the
# same plan (l3-70b.down, s2/e3/w5) holds. Run from the repository root with carry
# ["build-dev/bins.tar.gz", "build-dev/old_bench.tar.gz"] (all of build-dev, with the old bench
# unpacked, exceeds the 64 MiB carry; binaries as decode_v55_s70_run.sh says). Steps:
#   - the K-slope of both builds: int8 bf16 g128, M = 1, N = 8192, K = 4096-28672, the rule's
#     plan for these rows forced (two splits, five stages), old and new alternating, three rounds;
#     time = fixed + slope * K separates the loop's rate from the prologue, ramp and epilogue;
#     S72_PDL and S72_ROUNDS below; S72_PLANS=1 adds forced plans for the target row;
#   - Nsight Compute (S72_NCU=0 leaves it out; boost clock, not ncu's base clock) on l3-70b.o
#     and l3-70b.down at M = 1, both builds: issue activity, stall reasons, DRAM throughput.
# The K-slope fits by scripts/perf/k_slope_summary.py.
set -uo pipefail
out=${OUT:?}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$out/gpu.txt"
tar xzf build-dev/bins.tar.gz || exit 2
tar xzf build-dev/old_bench.tar.gz || exit 2
new=build/bench/sailfish_bench
old=build-dev/old/sailfish_bench
shapes=k4=4096x8192,k8=8192x8192,k16=16384x8192,k28=28672x8192
# S72_PDL="1 0" also times each build launched without programmatic dependent launch (its rows
# named old_nopdl_*, new_nopdl_*): whether a difference in the fixed part is the launch chain's.
for round in $(seq 1 "${S72_ROUNDS:-3}"); do
  for pdl in ${S72_PDL:-1}; do
    for side in old new; do
      bin=$old
      [ "$side" = new ] && bin=$new
      name=$side
      [ "$pdl" = 0 ] && name=${side}_nopdl
      SAILFISH_PDL=$pdl SAILFISH_DECODE_SPLITS=2 SAILFISH_DECODE_WARP_STAGES=5 timeout 100 \
        "$bin" --bits 8 --tiers decode -m 1 --shapes "$shapes" --no-cublas --read-bw-gib 1 \
        --json "$out/kslope_${name}_$round.json" > "$out/kslope_${name}_$round.log" 2>&1
      echo "kslope $name round $round: rc=$?"
    done
  done
done
python3 scripts/perf/k_slope_summary.py "$out" > "$out/kslope_fit.md" 2>&1
# S72_PLANS=1: the new build on the int8 rows with the target row's plan family, forced:
# the rule, four stages unpadded (room for a CTA of the next launch beside two of this one) and
# padded (the tune() candidate), six stages; two rounds.
if [ "${S72_PLANS:-0}" = 1 ]; then
  for round in 1 2; do
    for plan in rule:: w4:4:0 w4spread:4:1 w6:6:; do
      IFS=: read -r name stages spread <<< "$plan"
      env ${stages:+SAILFISH_DECODE_SPLITS=2 SAILFISH_DECODE_WARP_STAGES=$stages} \
        ${spread:+SAILFISH_DECODE_SPREAD=$spread} timeout 100 "$new" --bits 8 --tiers decode \
        -m 1 --shapes l3-70b.o,l3-70b.down,l3-8b.gate_up --no-cublas --read-bw-gib 1 \
        --json "$out/plan_${name}_$round.json" > "$out/plan_${name}_$round.log" 2>&1
      echo "plan $name round $round: rc=$?"
      grep -E "^l3" "$out/plan_${name}_$round.log" | awk '!seen[$0]++'
    done
  done
fi
sed -n '/fixed us/,$p' "$out/kslope_fit.md"
[ "${S72_NCU:-1}" = 1 ] || { bash scripts/pack_out.sh "$out" s72.tar.gz gpu.txt kslope_fit.md; exit 0; }
# shellcheck source=scripts/perf/ncu_decode_lib.sh
source scripts/perf/ncu_decode_lib.sh
metrics=sm__cycles_elapsed.max,smsp__inst_executed.sum,smsp__cycles_active.avg
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active
for shape in l3-70b.o l3-70b.down; do
  for side in old new; do
    bin=$old
    [ "$side" = new ] && bin=$new
    NCU_CLOCK_CONTROL=none ncu_warp_split "$ncu_out/${shape}_${side}.log" "$bin" "$metrics" \
      --bits 8 --shapes "$shape" -m 1
    echo "ncu $shape $side: rc=$?"
  done
done
keys='Duration|DRAM Throughput|Issue Slots Busy|Issued Ipc Active|No Eligible|Warp Cycles Per Issued'
keys+='|Stall Long Scoreboard|inst_executed.sum|dram__bytes_read|Registers Per|Achieved Occupancy'
for f in "$ncu_out"/*.log; do
  echo "== $(basename "$f")"
  grep -E "$keys" "$f" | sed 's/  */ /g' | cut -c1-110
done
bash scripts/pack_out.sh "$out" s72.tar.gz gpu.txt kslope_fit.md
