#!/usr/bin/env bash
# The decode tier's figures behind docs/perf/decode.md, on a GPU host (the device tool): the auto
# tier at M = 1-64 with cuBLAS and the stream-only floor alongside, int8, deterministic mode,
# programmatic dependent launch off, and the router GEMVs. JSON and logs go to $OUT (or out/);
# a compact table is printed last.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
bench=$root/build/bench/sailfish_bench
mkdir -p "$out"
run() {
  local name=$1
  shift
  timeout 200 "$@" --json "$out/$name.json" > "$out/$name.log" 2>&1
  echo "$name: rc=$?"
}
run auto_m1_64 "$bench" --tiers auto -m 1,16,32,64
run int8_m1_16 "$bench" --tiers decode --bits 8 -m 1,16
SAILFISH_DETERMINISTIC=1 run deterministic "$bench" --tiers decode -m 1,16 --no-cublas
SAILFISH_PDL=0 run no_pdl "$bench" --tiers decode -m 1,16 --no-cublas
run router "$bench" --tiers auto --bias -m 1 \
  --shapes router-2880x32=2880x32,router-4096x8=4096x8,router-4096x64=4096x64,router-7168x256=7168x256,router-8192x128=8192x128,router-8192x256=8192x256
for f in auto_m1_64 int8_m1_16 router; do
  grep -E "^(l3|router)" "$out/$f.log" | awk '{printf "%s %s %s %s %s %s\n", $1, $2, $3, $4, $9, $12}' | sort -u
done
