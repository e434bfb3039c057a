#!/usr/bin/env bash
# The prefill/dense/cuBLAS comparison behind docs/perf/prefill.md and the dispatch crossover,
# int8 prefill, and the MatMulNBits router GEMVs (M = 1, small N, bias). Writes JSON and logs to
# $OUT (or out/) and prints a compact table.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
bench=$root/build/bench/sailfish_bench
mkdir -p "$out"
timeout 300 "$bench" --tiers prefill,dense -m 128,256,512,1024,2048,4096,8192 \
  --json "$out/prefill_dense.json" > "$out/prefill_dense.log" 2>&1
echo "prefill/dense bench: rc=$?"
timeout 120 "$bench" --tiers prefill --bits 8 -m 1024,2048,4096 \
  --json "$out/prefill_int8.json" > "$out/prefill_int8.log" 2>&1
echo "prefill int8 bench: rc=$?"
timeout 120 "$bench" --tiers auto --bias -m 1 \
  --shapes router-2880x32=2880x32,router-4096x8=4096x8,router-4096x64=4096x64,router-7168x256=7168x256,router-8192x128=8192x128,router-8192x256=8192x256 \
  --json "$out/router.json" > "$out/router.log" 2>&1
echo "router bench: rc=$?"
for f in prefill_dense prefill_int8 router; do
  grep -E " (prefill|dense|auto|decode) " "$out/$f.log" | awk '{printf "%s %s %s %s %s\n", $1, $2, $3, $4, $9}' | sort -u
done
