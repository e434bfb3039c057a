#!/usr/bin/env bash
# Build-time variants side by side on a GPU host: one bench build per NAME=CUDA_FLAGS argument
# (e.g. stages6=-DSAILFISH_DECODE_STAGES=6), each benchmarked with VARIANT_BENCH_ARGS into
# $OUT/variant_NAME.json. An empty flag string is the default build. The builds run one after
# another at full width; the benches run after all builds, back to back, so clocks and L2 state
# are alike.
#   VARIANT_BENCH_ARGS="--tiers decode -m 1,16 --no-cublas" \
#     scripts/device_build_variants.sh base= t1min5=-DSAILFISH_DECODE_MIN_CTAS_T1=5
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
read -r -a bench_args <<< "${VARIANT_BENCH_ARGS:---tiers decode -m 1,16 --no-cublas}"
built=()
for spec in "$@"; do
  name=${spec%%=*} flags=${spec#*=}
  b=$root/build-variant-$name
  cmake -S "$root" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAILFISH_BUILD_TESTS=OFF \
    -DSAILFISH_DEPS_DIR="$root/.deps" -DCMAKE_CUDA_FLAGS="$flags" > "$out/cmake_$name.log" 2>&1 &&
    cmake --build "$b" -j "$(nproc)" --target sailfish_bench > "$out/build_$name.log" 2>&1 ||
    { echo "variant $name: build failed"; tail -20 "$out/build_$name.log"; continue; }
  built+=("$name")
done
for name in "${built[@]}"; do
  "$root/build-variant-$name/bench/sailfish_bench" "${bench_args[@]}" \
    --json "$out/variant_$name.json" > "$out/variant_$name.log" 2>&1
  echo "variant $name: bench rc=$?"
done
