#!/usr/bin/env bash
# README's test command: stages dependencies, builds everything (CUDA code too; no GPU needed to
# compile) and runs the whole CTest suite. GPU tests skip cleanly on a machine without a device.
# Usage: scripts/run_tests.sh [extra ctest arguments, e.g. -L cpu]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SAILFISH_BUILD_DIR:-$root/build}
jobs=${SAILFISH_JOBS:-$(nproc)}

bash "$root/scripts/stage_deps.sh" all
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs"
cd "$build"
ctest --output-on-failure -j "$jobs" "$@"
