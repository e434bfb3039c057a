#!/usr/bin/env bash
# Per-kernel GPU time of decode-tier launches, from Nsight Compute (gpu__time_duration), so a
# launch sequence (prep, main kernel, reduce kernel) can be split into its parts. Kernels run
# serialized with the caches flushed before each (weights cold, as in the bench; the reduce kernel
# then reads its partials from DRAM, not L2, so its time is an upper bound).
#   scripts/perf/kernel_times.sh BENCH OUT_DIR CASE [CASE ...]
#   CASE = shape:M[:splits[:cluster]]  e.g. l3-8b.gate_up:32:2:0 (2 splits, reduce kernel)
# Prints one table row per case and kernel (the last launch of each kernel name).
set -uo pipefail
bench=$1 out=$2
shift 2
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
for spec in "$@"; do
  IFS=: read -r shape m splits cluster <<< "$spec"
  log="$out/ktime_${shape}_m${m}_s${splits:-auto}_c${cluster:-auto}.csv"
  env ${splits:+SAILFISH_DECODE_SPLITS=$splits} ${cluster:+SAILFISH_DECODE_CLUSTER_REDUCE=$cluster} \
    timeout 120 ncu --kernel-name regex:'warp_split|decode_kernel|reduce_kernel|prep_kernel' \
    --metrics gpu__time_duration.sum --csv --print-units base --clock-control none \
    --cache-control all "$bench" --tiers decode --shapes "$shape" -m "$m" --no-cublas \
    --replays 1 --warmup 0 --graph-launches 1 --check-samples 0 > "$log" 2>&1
  python3 "$here/kernel_times.py" "$spec" "$log"
done
