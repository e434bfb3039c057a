#!/usr/bin/env bash
# Prefill pipeline-depth and split sweeps on the device (docs/perf/prefill.md): one bench process
# per setting, int4 g128 bf16, without the cuBLAS baseline (taken in the main bench).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
bench=$root/build/bench/sailfish_bench
mkdir -p "$out"
small=l3-8b.qkv,l3-8b.o,l3-70b.qkv
large=l3-8b.o,l3-8b.gate_up
for stages in 4 6 8 10; do
  SAILFISH_PREFILL_STAGES=$stages timeout 60 "$bench" --tiers prefill --shapes $small -m 128 \
    --no-cublas --replays 3 --json "$out/stages_m128_s$stages.json" > "$out/stages_m128_s$stages.log" 2>&1
done
for stages in 3 4 5; do
  SAILFISH_PREFILL_STAGES=$stages timeout 90 "$bench" --tiers prefill --shapes $large -m 4096 \
    --no-cublas --replays 3 --json "$out/stages_m4096_s$stages.json" > "$out/stages_m4096_s$stages.log" 2>&1
done
for splits in 1 2 3 4; do
  SAILFISH_PREFILL_SPLITS=$splits timeout 60 "$bench" --tiers prefill --shapes $small -m 128 \
    --no-cublas --replays 3 --json "$out/splits_m128_s$splits.json" > "$out/splits_m128_s$splits.log" 2>&1
done
for f in "$out"/stages_*.log "$out"/splits_*.log; do
  echo "== $(basename "$f" .log)"
  grep -E " prefill " "$f" | awk '{print "  " $1, $2, $4}'
done
