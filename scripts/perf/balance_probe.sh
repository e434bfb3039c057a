#!/usr/bin/env bash
# What an even share of work an SM would buy at M = 1 and 16 (v49, docs/perf/decode.md): each
# layer beside a sibling whose strip count makes the plan's grid divide evenly over the H200's 132
# SMs (N = 8448 is 132 strips of 64 columns). If the sibling's time over its floor is well below
# the layer's, the layer loses that much to whole-strip quantization; if the two match, the
# imbalance is already hidden (the next launch's CTAs fill the idle SMs). JSON and logs in $OUT.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/out}
bench=${BENCH:-$root/build/bench/sailfish_bench}
mkdir -p "$out"
run() {
  local name=$1
  shift
  timeout 300 "$bench" --tiers decode --no-cublas "$@" --json "$out/$name.json" > "$out/$name.log" 2>&1
  echo "$name: rc=$?"
}
int4_shapes=l3-70b.down,b70-down-132=28672x8448,l3-70b.o,b70-o-132=8192x8448
int4_shapes+=,l3-70b.qkv,b70-qkv-176=8192x11264,l3-8b.qkv,b8-qkv-132=4096x8448
int4_shapes+=,l3-8b.down,b8-down-66=14336x4224,b8-down-75=14336x4800
run balance_int4 --shapes "$int4_shapes" -m 1,16
run balance_int8 --bits 8 -m 1 \
  --shapes l3-70b.o,b70-o-132=8192x8448,l3-8b.gate_up,b8-gate_up-462=4096x29568
