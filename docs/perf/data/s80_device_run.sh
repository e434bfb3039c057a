#!/usr/bin/env bash
# Stop 80's device call, on whatever card comes: the tree's GPU suite (1bd5e65's shared geometry
# comparison and 2f8e509's form of the bad-input test had not run on a GPU), the C ABI checks, and
# the bench's new --eager timing (decode rows at M = 1 and 16 enqueued one by one, beside their
# graph figures, cuBLAS's and one bare launch of the floor). Where the card is an H200, the
# standing's graph rows follow. Run from the repository root with carry
# ["build-dev/bins.tar.gz", "build-dev/capi.tar.gz"] (scripts/pack_device_bins.sh, and
# build/src/libsailfish_c.so packed as capi.tar.gz).
set -uo pipefail
out=${OUT:?}
tar xzf build-dev/bins.tar.gz && tar xzf build-dev/capi.tar.gz || exit 2
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$out/gpu.txt"
lscpu | grep -E '^(Model name|CPU\(s\)|CPU max MHz)' | tee "$out/cpu.txt"
b=build/bench/sailfish_bench
timeout 200 $b --tiers auto -m 1,16 --eager --json "$out/eager_m1_16.json" > "$out/eager_m1_16.log" 2>&1
echo "eager bench rc=$?"
GPU_TEST_TIMEOUT=${S80_SUITE_TIMEOUT:-300} bash scripts/device_round.sh tests-sharded 2>&1 | tail -4
if python3 -c 'import onnxruntime' 2>/dev/null; then
  timeout 60 python3 tests/oracle/test_matmul_nbits_gpu.py --lib build/src/libsailfish_c.so \
    --api-only > "$out/conformance_api.log" 2>&1
  echo "conformance api-only rc=$?"
  grep -E 'passed,' "$out/conformance_api.log" | tail -3
else
  echo "no onnxruntime on the device: the C ABI conformance checks not run"
fi
if grep -q H200 "$out/gpu.txt" && [ "$SECONDS" -lt 380 ]; then
  timeout 150 $b --tiers auto -m 1,16,32,64 --json "$out/auto_m1_64.json" > "$out/auto_m1_64.log" 2>&1
  echo "H200 bench rc=$?"
  grep -hE '^(shape|l3)' "$out/auto_m1_64.log" | awk '!s[$0]++'
fi
# The eager table last: the graph figure, the eager one, and what each call costs the host.
sed -n '/^eager (no graph/,/^$/p' "$out/eager_m1_16.log"
# At most 8 files come back: everything in one archive.
(cd "$out" && tar cJf /tmp/s80_device.tar.xz . && rm -rf ./* && mv /tmp/s80_device.tar.xz .)
