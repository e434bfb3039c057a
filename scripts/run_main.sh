#!/usr/bin/env bash
# README's main-job command. On a machine with a CUDA device: builds and runs the benchmark on the
# default shape set and writes results to out/bench.json (and out/bench.png when matplotlib is
# there). Without a device: says so, and runs the CPU reference self-check instead.
# Extra arguments go to the bench binary (see docs/BENCH.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SAILFISH_BUILD_DIR:-$root/build}
jobs=${SAILFISH_JOBS:-$(nproc)}

bash "$root/scripts/stage_deps.sh" build
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAILFISH_BUILD_TESTS=OFF
cmake --build "$build" -j "$jobs"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  mkdir -p "$root/out"
  "$build/bench/sailfish_bench" --json "$root/out/bench.json" "$@"
  python3 "$root/tools/plot_bench.py" "$root/out/bench.json" "$root/out/bench.png" || \
    echo "(no plot: matplotlib missing; the JSON is in out/bench.json)"
else
  echo "No CUDA device on this machine: the benchmark needs one. Running the CPU self-check."
  "$build/tools/sailfish_selfcheck"
fi
