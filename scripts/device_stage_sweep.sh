#!/usr/bin/env bash
# Decode pipeline-depth sweep on a GPU host: one bench build per SAILFISH_DECODE_STAGES value,
# decode tier at M = 1 and 16 on the default shapes (heuristic splits, and 4 splits).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
for stages in "$@"; do
  b=$root/build-stages$stages
  cmake -S "$root" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAILFISH_BUILD_TESTS=OFF \
    -DSAILFISH_DEPS_DIR="$root/.deps" -DCMAKE_CUDA_FLAGS="-DSAILFISH_DECODE_STAGES=$stages" \
    > "$out/cmake$stages.log" 2>&1 &&
    cmake --build "$b" -j "$(nproc)" --target sailfish_bench > "$out/build$stages.log" 2>&1 ||
    { echo "build $stages failed"; tail -20 "$out/build$stages.log"; continue; }
  "$b/bench/sailfish_bench" --tiers decode -m 1,16 --no-cublas \
    --json "$out/stages$stages.json" > "$out/stages$stages.log" 2>&1
  SAILFISH_DECODE_SPLITS=4 "$b/bench/sailfish_bench" --tiers decode -m 1,16 --no-cublas \
    --json "$out/stages${stages}_s4.json" > "$out/stages${stages}_s4.log" 2>&1
  echo "stages $stages done"
done
