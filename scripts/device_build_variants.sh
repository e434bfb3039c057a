#!/usr/bin/env bash
# Build-time variants side by side on a GPU host: one bench build per NAME=CUDA_FLAGS argument
# (e.g. stages6=-DSAILFISH_DECODE_STAGES=6), each benchmarked once with VARIANT_BENCH_ARGS into
# $OUT/variant_NAME.json. An empty flag string is the default build. The one-round case of
# scripts/device_variant_rounds.sh, which builds into build-variant/NAME and runs the benches
# after all builds, back to back, so clocks and L2 state are alike.
#   VARIANT_BENCH_ARGS="--tiers decode -m 1,16 --no-cublas" \
#     scripts/device_build_variants.sh base= t1min5=-DSAILFISH_DECODE_MIN_CTAS_T1=5
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
names=()
for spec in "$@"; do names+=("${spec%%=*}"); done
spec_file=$(mktemp)
trap 'rm -f "$spec_file"' EXIT
(IFS=,; echo "variant|${names[*]}|${VARIANT_BENCH_ARGS:---tiers decode -m 1,16 --no-cublas}") \
  > "$spec_file"
OUT=$out VARIANT_ROUNDS=1 VARIANT_BUILD_ROOT=$root/build-variant \
  "$root/scripts/device_variant_rounds.sh" "$spec_file" "$@"
for name in "${names[@]}"; do
  for ext in json log; do
    from=$out/variant_${name}_1.$ext
    [ -f "$from" ] && mv "$from" "$out/variant_$name.$ext"
  done
done
