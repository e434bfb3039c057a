#!/usr/bin/env bash
# Stop 65's device call (run from the repository root with carry ["build-dev"]): on an H200 only,
# the final set (scripts/device_decode_final.sh), the GPU suite in shards, then tune() against
# the rules at M = 1-64 (int4) and M = 1 (int8), on binaries packed by scripts/pack_device_bins.sh.
set -uo pipefail
out=${OUT:?}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$out/gpu.txt"
grep -q H200 "$out/gpu.txt" || { echo "not an H200: nothing run"; exit 3; }
tar xzf build-dev/bins.tar.gz || exit 2
timeout 300 bash scripts/device_decode_final.sh > "$out/final_stdout.txt" 2>&1
echo "final rc=$?"
# S66_SKIP_SUITE=1 leaves the suite out when the lease is short (it passed on an H100 after each
# kernel change of stops 61-63; on an H200 last in stop 58).
if [ "${S66_SKIP_SUITE:-0}" != 1 ]; then
  GPU_TEST_TIMEOUT=150 OUT="$out/suite" timeout 200 bash scripts/device_round.sh tests-sharded \
    > "$out/suite_stdout.txt" 2>&1
  echo "suite rc=$?"
fi
bench=build/bench/sailfish_bench
# tune() last and bounded, so a short lease still returns the final set and the suite;
# S65_SKIP_TUNE=1 leaves it out.
if [ "${S65_SKIP_TUNE:-0}" != 1 ]; then
  timeout 150 "$bench" --tiers auto --tune --tune-recheck -m 1,16,32,64 --no-cublas \
    --json "$out/tuned_int4.json" > "$out/tuned_int4.log" 2>&1
  echo "tuned int4 rc=$?"
  timeout 60 "$bench" --tiers decode --bits 8 --tune -m 1 --no-cublas \
    --json "$out/tuned_int8.json" > "$out/tuned_int8.log" 2>&1
  echo "tuned int8 rc=$?"
fi
{
  tail -4 "$out/suite_stdout.txt"
  grep -hE "^l3" "$out/tuned_int4.log" "$out/tuned_int8.log" | awk '{print $1, $2, $3, $4}'
  cat "$out/decode_final_summary.txt"
} > "$out/s65_summary.txt" 2>&1
bash scripts/pack_out.sh "$out" s65_h200.tar.gz s65_summary.txt
cat "$out/s65_summary.txt"
