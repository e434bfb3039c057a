#!/usr/bin/env bash
# Stop 79's device call: the validation change's GPU tests on whatever card comes, and, where it is
# an H200, the standing's bench rows after them. Run from the repository root with carry
# ["build-dev/bins.tar.gz", "build-dev/capi.tar.gz"] (scripts/pack_device_bins.sh, and
# build/src/libsailfish_c.so packed as capi.tar.gz).
set -uo pipefail
out=${OUT:?}
tar xzf build-dev/bins.tar.gz && tar xzf build-dev/capi.tar.gz || exit 2
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$out/gpu.txt"
SAILFISH_REQUIRE_GPU=1 timeout 100 build/tests/sailfish_gpu_tests \
  --gtest_filter='*RunBadInput*:PlannerInputLimits*' > "$out/run_bad_input.log" 2>&1
echo "run_bad_input rc=$?"
grep -E '^\[ +(OK|FAILED|PASSED|SKIPPED) ' "$out/run_bad_input.log" | head -12
# The whole GPU suite in four shards (device_round.sh packs its logs into round_files.tar.gz).
GPU_TEST_TIMEOUT=${S79_SUITE_TIMEOUT:-300} bash scripts/device_round.sh tests-sharded 2>&1 | tail -4
if python3 -c 'import onnxruntime' 2>/dev/null; then
  timeout 60 python3 tests/oracle/test_matmul_nbits_gpu.py --lib build/src/libsailfish_c.so \
    --api-only > "$out/conformance_api.log" 2>&1
  echo "conformance api-only rc=$?"
  grep -E 'c_api error path|passed,' "$out/conformance_api.log" | tail -12
else
  echo "no onnxruntime on the device: the C ABI conformance checks not run"
fi
if grep -q H200 "$out/gpu.txt" && [ "$SECONDS" -lt 330 ]; then
  timeout 150 build/bench/sailfish_bench --tiers auto -m 1,16,32,64 --json "$out/auto_m1_64.json" \
    > "$out/auto_m1_64.log" 2>&1
  echo "H200 bench rc=$?"
  grep -hE '^(shape|l3)' "$out/auto_m1_64.log"
fi
