#!/usr/bin/env bash
# Build the GPU test and bench binaries here and pack them for the device tool, so a fresh device
# machine runs them as built instead of spending 4-5 minutes of device time on the build:
#   scripts/pack_device_bins.sh            # then run with carry ["build-dev"] and the command:
#   tar xzf build-dev/bins.tar.gz && scripts/device_round.sh moe tests-sharded ...
# (no `build` stage there: it would rebuild over the unpacked binaries). The device's image has
# the same CUDA 13.0 runtime and cuBLAS these link against (seen in stop 55). The tarball stays
# under the device's 64 MiB carry limit only compressed: the three binaries are ~41 MB.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SAILFISH_BUILD_DIR:-$root/build}
targets=(sailfish_gpu_tests sailfish_bench sailfish_moe_bench)
case "$build" in
  "$root"/*) ;;
  *) echo "$0: the build directory ($build) must be inside the repository ($root)," \
       "where the device unpacks it" >&2; exit 2 ;;
esac
[ -f "$build/CMakeCache.txt" ] ||
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAILFISH_DEPS_DIR="$root/.deps"
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
mkdir -p "$root/build-dev"
# Paths inside the tarball are relative to the repository root, where the device command runs.
(cd "$root" && tar czf build-dev/bins.tar.gz "${build#"$root"/}/tests/sailfish_gpu_tests" \
  "${build#"$root"/}/bench/sailfish_bench" "${build#"$root"/}/bench/sailfish_moe_bench")
echo "packed $(du -h "$root/build-dev/bins.tar.gz" | cut -f1) into build-dev/bins.tar.gz"
