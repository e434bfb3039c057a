#!/usr/bin/env bash
# Builds and runs scripts/perf/probes/stream_pattern_probe.cu on a GPU host (v49,
# docs/perf/decode.md): the decode kernel's weight access pattern with no math, against a plain
# streaming read of the same bytes. Output: $OUT/stream_pattern_probe.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
nvcc -O3 -std=c++17 -arch=sm_90a -I"$root/src" "$root/scripts/perf/probes/stream_pattern_probe.cu" \
  -o /tmp/stream_pattern_probe
/tmp/stream_pattern_probe | tee "$out/stream_pattern_probe.log"
