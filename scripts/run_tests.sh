#!/usr/bin/env bash
# README's test command: stages dependencies, builds everything (CUDA code too; no GPU needed to
# compile) and runs the whole CTest suite. GPU tests skip cleanly on a machine without a device.
# Then a second, host-only build (SAILFISH_ENABLE_CUDA=OFF: the host API that offline packing tools
# link) under AddressSanitizer and UndefinedBehaviorSanitizer runs the CPU suite again, so that
# configuration keeps building and the host code (importers, deserialization of untrusted bytes,
# packing, the reference, the decode rules) is checked for memory errors and undefined behaviour.
# That stage leaves out the ONNX Runtime oracle (Python would have to preload the sanitizer
# runtime); the first stage runs it. Last, the library alone is compiled for Ampere
# (SAILFISH_CUDA_ARCHS=80: the decode and dense tiers, no wgmma), so kernels keep their sm_90-only
# instructions behind architecture guards. SAILFISH_HOST_SANITIZE=0 and SAILFISH_AMPERE_BUILD=0
# skip those stages (e.g. while iterating on one test).
# Usage: scripts/run_tests.sh [extra ctest arguments for the first stage, e.g. -L cpu]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SAILFISH_BUILD_DIR:-$root/build}
host_build=${SAILFISH_HOST_BUILD_DIR:-$root/build-host-sanitized}
ampere_build=${SAILFISH_AMPERE_BUILD_DIR:-$root/build-sm80}
jobs=${SAILFISH_JOBS:-$(nproc)}

bash "$root/scripts/stage_deps.sh" all
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs"
(cd "$build" && ctest --output-on-failure -j "$jobs" "$@")

if [ "${SAILFISH_HOST_SANITIZE:-1}" != 0 ]; then
  sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake -S "$root" -B "$host_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSAILFISH_ENABLE_CUDA=OFF -DCMAKE_CXX_FLAGS="$sanitize" \
    -DCMAKE_EXE_LINKER_FLAGS="$sanitize" -DCMAKE_SHARED_LINKER_FLAGS="$sanitize"
  cmake --build "$host_build" -j "$jobs"
  (cd "$host_build" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    ctest --output-on-failure -j "$jobs" -L cpu -E ort_oracle)
fi

if [ "${SAILFISH_AMPERE_BUILD:-1}" != 0 ]; then
  cmake -S "$root" -B "$ampere_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSAILFISH_CUDA_ARCHS=80 -DSAILFISH_BUILD_TESTS=OFF -DSAILFISH_BUILD_BENCH=OFF
  cmake --build "$ampere_build" -j "$jobs" --target sailfish
fi
