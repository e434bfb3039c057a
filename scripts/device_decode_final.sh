#!/usr/bin/env bash
# The decode tier's figures behind docs/perf/decode.md, on a GPU host (the device tool): the auto
# tier at M = 1-64 with cuBLAS and the stream-only floor alongside, int8, deterministic mode,
# programmatic dependent launch off, and the router GEMVs. Run after scripts/device_round.sh build
# (SAILFISH_BUILD_DIR: another build). The five runs' JSON go to $OUT (or out/), their logs into
# one file, decode_final.log, each under a "## NAME: rc=N" line (the device returns at most 8
# files from $OUT); a compact table (shape, M, tier, us, x_cublas, MHz) is printed last and kept
# in decode_final_summary.txt. Exit status 1 where a run's rc was not 0.
#   scripts/device_round.sh build && scripts/device_decode_final.sh   (one call, 9 files: packed)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
build=${SAILFISH_BUILD_DIR:-$root/build}
bench=$build/bench/sailfish_bench
mkdir -p "$out"
summary=$out/decode_final_summary.txt
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }
if [ ! -x "$bench" ]; then
  note "no bench at $bench: build first (scripts/device_round.sh build, in the same call if the" \
    "machine was given back since the last)"
  exit 2
fi
# As device_round.sh: the device copy's git metadata can lag, so the sources' hash goes along.
if [ -z "${SAILFISH_GIT_REVISION:-}" ]; then
  revision=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  export SAILFISH_GIT_REVISION="$revision+sources-$(bash "$root/scripts/source_hash.sh" "$root")"
fi
names=() status=0
run() {
  local name=$1
  shift
  timeout 200 "$@" --json "$out/$name.json" > "$out/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc"
  [ "$rc" -eq 0 ] || status=1
  names+=("$name")
  { echo "## $name: rc=$rc"; cat "$out/$name.log"; } >> "$out/decode_final.log.tmp"
}
rm -f "$out/decode_final.log.tmp"
run auto_m1_64 "$bench" --tiers auto -m 1,16,32,64
run int8_m1_16 "$bench" --tiers decode --bits 8 -m 1,16
SAILFISH_DETERMINISTIC=1 run deterministic "$bench" --tiers decode -m 1,16 --no-cublas
SAILFISH_PDL=0 run no_pdl "$bench" --tiers decode -m 1,16 --no-cublas
run router "$bench" --tiers auto --bias -m 1 \
  --shapes router-2880x32=2880x32,router-4096x8=4096x8,router-4096x64=4096x64,router-7168x256=7168x256,router-8192x128=8192x128,router-8192x256=8192x256
note "shape M tier us x_cublas MHz"
for f in auto_m1_64 int8_m1_16 router; do
  grep -E "^(l3|router)" "$out/$f.log" | awk '{printf "%s %s %s %s %s %s\n", $1, $2, $3, $4, $9, $12}' |
    sort -u | tee -a "$summary"
done
mv "$out/decode_final.log.tmp" "$out/decode_final.log"
for name in "${names[@]}"; do rm -f "$out/$name.log"; done
# Within the device's 8 files also after device_round.sh's build stage in the same call: past 8,
# all but the summaries go into decode_final_files.tar.gz.
bash "$root/scripts/pack_out.sh" "$out" decode_final_files.tar.gz summary.txt \
  decode_final_summary.txt | tee -a "$summary"
exit "$status"
