#!/usr/bin/env bash
# Runs on a tree with prefill_s68_cluster_rejected.patch applied (the rejected change; perf/prefill.md,
# "Stop 68"): the option and kernel it times are not in the landed library.
# Stop 68's device call (from the repository root, carry ["build-dev"], binaries packed here by
# scripts/pack_device_bins.sh): the GPU suite in shards, then an A/B of the prefill tier's
# clustered split grid (src/prefill/cluster_reduce.h) against the reduce kernel on one binary,
# SAILFISH_PREFILL_CLUSTER_REDUCE unset ("on": the rule) against 0 ("off"), alternating sides,
# S68_ROUNDS rounds: int4 g128 bf16 at M = 48 and 64 and int8 at M = 32 and 64, auto tier, the
# bench's defaults (cold weights, CUDA graphs, PDL). S68_SKIP_SUITE=1 leaves the suite out.
# S68_BITS=4 leaves int8 out; S68_SHAPES (the bench's --shapes) and S68_M (int4 M values)
# limit the rows.
set -uo pipefail
out=${OUT:?}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$out/gpu.txt"
tar xzf build-dev/bins.tar.gz || exit 2
bench=build/bench/sailfish_bench
shapes=()
[ -n "${S68_SHAPES:-}" ] && shapes=(--shapes "$S68_SHAPES")
# S68_TEST_FILTER: a gtest filter run in one process instead of the whole suite.
if [ -n "${S68_TEST_FILTER:-}" ]; then
  timeout 200 build/tests/sailfish_gpu_tests --gtest_filter="$S68_TEST_FILTER" \
    > "$out/tests_filtered.log" 2>&1
  echo "filtered tests rc=$?"
  grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" "$out/tests_filtered.log" | head -20
elif [ "${S68_SKIP_SUITE:-0}" != 1 ]; then
  GPU_TEST_TIMEOUT=150 OUT="$out/suite" timeout 220 bash scripts/device_round.sh tests-sharded \
    > "$out/suite_stdout.txt" 2>&1
  echo "suite rc=$?"
  tail -4 "$out/suite_stdout.txt"
fi
for round in $(seq 1 "${S68_ROUNDS:-2}"); do
  for side in on off; do
    envs=()
    [ "$side" = off ] && envs=(SAILFISH_PREFILL_CLUSTER_REDUCE=0)
    env "${envs[@]}" timeout 120 "$bench" "${shapes[@]}" --tiers auto -m "${S68_M:-48,64}" --no-cublas \
      --json "$out/ab_int4_${side}_$round.json" > "$out/ab_int4_${side}_$round.log" 2>&1
    echo "int4 $side round $round: rc=$?"
    [ "${S68_BITS:-4,8}" = 4 ] && continue
    env "${envs[@]}" timeout 90 "$bench" "${shapes[@]}" --tiers auto --bits 8 -m 32,64 --no-cublas \
      --json "$out/ab_int8_${side}_$round.json" > "$out/ab_int8_${side}_$round.log" 2>&1
    echo "int8 $side round $round: rc=$?"
  done
done
# The last round's launches and times, side by side.
for bits in int4 int8; do
  [ -f "$out/ab_${bits}_on_1.log" ] || continue
  paste <(grep -E "^l3" "$out/ab_${bits}_on_1.log" | awk '{print $1, $2, $4}') \
        <(grep -E "^l3" "$out/ab_${bits}_off_1.log" | awk '{print $4}') > "$out/ab_${bits}_table.txt"
done
bash scripts/pack_out.sh "$out" s68.tar.gz gpu.txt
cat "$out"/ab_int*_table.txt
