#!/usr/bin/env bash
# Stop 72's second device call (perf/decode.md, v55, "Stop 72"): why v55's shorter bf16 int8 loop
# runs the int8 target row (l3-70b.o, M = 1) 2% slower on the H200 while the long-K row with the
# same plan (l3-70b.down, s2/e3/w5) holds. Run from the repository root with carry ["build-dev"]
# (binaries as decode_v55_s70_run.sh says). Steps:
#   - the K-slope of both builds: int8 bf16 g128, M = 1, N = 8192, K = 4096-28672, the rule's
#     plan for these rows forced (two splits, five stages), old and new alternating, three rounds;
#     time = fixed + slope * K separates the loop's rate from the prologue, ramp and epilogue;
#   - Nsight Compute (boost clock, not ncu's base clock) on l3-70b.o and l3-70b.down at M = 1,
#     both builds: issue activity, stall reasons, DRAM throughput.
# The K-slope fits by scripts/perf/k_slope_summary.py.
set -uo pipefail
out=${OUT:?}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$out/gpu.txt"
tar xzf build-dev/bins.tar.gz || exit 2
tar xzf build-dev/old_bench.tar.gz || exit 2
new=build/bench/sailfish_bench
old=build-dev/old/sailfish_bench
shapes=k4=4096x8192,k8=8192x8192,k16=16384x8192,k28=28672x8192
for round in 1 2 3; do
  for side in old new; do
    bin=$old
    [ "$side" = new ] && bin=$new
    SAILFISH_DECODE_SPLITS=2 SAILFISH_DECODE_WARP_STAGES=5 timeout 100 "$bin" --bits 8 \
      --tiers decode -m 1 --shapes "$shapes" --no-cublas --read-bw-gib 1 \
      --json "$out/kslope_${side}_$round.json" > "$out/kslope_${side}_$round.log" 2>&1
    echo "kslope $side round $round: rc=$?"
  done
done
python3 scripts/perf/k_slope_summary.py "$out" > "$out/kslope_fit.md" 2>&1
cat "$out/kslope_fit.md"
mkdir -p "$out/n"
sections=()
for s in SpeedOfLight MemoryWorkloadAnalysis WarpStateStats SchedulerStats Occupancy LaunchStats; do
  sections+=(--section "$s")
done
metrics=sm__cycles_elapsed.max,smsp__inst_executed.sum,smsp__cycles_active.avg
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active
for shape in l3-70b.o l3-70b.down; do
  for side in old new; do
    bin=$old
    [ "$side" = new ] && bin=$new
    timeout 120 ncu --clock-control none -k regex:decode_warp_split_kernel -c 1 "${sections[@]}" \
      --metrics "$metrics" "$bin" --bits 8 --shapes "$shape" -m 1 --tiers decode --no-cublas \
      --replays 1 --warmup 0 --graph-launches 1 --check-samples 0 \
      > "$out/n/${shape}_${side}.log" 2>&1
    echo "ncu $shape $side: rc=$?"
  done
done
keys='Duration|DRAM Throughput|Issue Slots Busy|Issued Ipc Active|No Eligible|Warp Cycles Per Issued'
keys+='|Stall Long Scoreboard|inst_executed.sum|dram__bytes_read|Registers Per|Achieved Occupancy'
for f in "$out"/n/*.log; do
  echo "== $(basename "$f")"
  grep -E "$keys" "$f" | sed 's/  */ /g' | cut -c1-110
done
bash scripts/pack_out.sh "$out" s72.tar.gz gpu.txt kslope_fit.md
