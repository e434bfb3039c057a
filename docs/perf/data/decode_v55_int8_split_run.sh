#!/usr/bin/env bash
# Decode v55's device calls (perf/decode.md, v55): bf16 int8's bytes split into their seven low bits
# and their top bit instead of nibbles, in every tier. Run from the repository root with carry
# ["build-dev"]; the binaries are built here: scripts/pack_device_bins.sh (the new tree), and the
# old tree's bench packed as build-dev/old_bench.tar.gz (build-dev/old/sailfish_bench, built from
# efd8431, the commit before v55: `tar czf build-dev/old_bench.tar.gz build-dev/old/sailfish_bench`).
# Steps:
#   - the GPU suite in shards (V55_SKIP_SUITE=1 leaves it out);
#   - an A/B of old and new bench binaries, alternating sides, V55_ROUNDS rounds (default 2), of
#     the sets named in V55_SETS (default "d1"):
#       d1  int8 bf16 g128, auto tier, M = 1, 4, 8 (the decode tier's one-tile loop)
#       d2  int8 bf16, decode tier forced, M = 9, 11 (its two-tile loop; auto sends M >= 12 to
#           the prefill tier)
#       p   int8 bf16, auto tier, M = 16, 64, 256, 1024 (the prefill tier's per-pair conversion)
#       z   int8 bf16 with zero points, auto tier, M = 1 and 64
#       c   int4 bf16, auto tier, M = 1 and 16, l3-8b.o and l3-70b.o (code not changed: control)
#     each on the Llama-3 8B and 70B shapes, the bench's defaults otherwise (cold weights, CUDA
#     graphs, PDL, the floor in the same run), no cuBLAS;
#   - V55_FINAL=1: then the new binary alone with cuBLAS bf16 beside it, int8 bf16 g128, auto tier,
#     M = 1, 16, 256, 1024 (final_int8.json; its printed table is the last thing shown).
# Then each set's table (scripts/perf/ab_summary.py).
set -uo pipefail
out=${OUT:?}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$out/gpu.txt"
tar xzf build-dev/bins.tar.gz || exit 2
tar xzf build-dev/old_bench.tar.gz || exit 2
new=build/bench/sailfish_bench
old=build-dev/old/sailfish_bench
if [ "${V55_SKIP_SUITE:-0}" != 1 ]; then
  GPU_TEST_TIMEOUT=170 OUT="$out/suite" timeout 240 bash scripts/device_round.sh tests-sharded \
    > "$out/suite_stdout.txt" 2>&1
  echo "suite rc=$?"
  tail -4 "$out/suite_stdout.txt"
fi
args_of() {
  case "$1" in
    d1) echo "--bits 8 --tiers auto -m 1,4,8" ;;
    d2) echo "--bits 8 --tiers decode -m 9,11" ;;
    p) echo "--bits 8 --tiers auto -m 16,64,256,1024" ;;
    z) echo "--bits 8 --zero-points --tiers auto -m 1,64" ;;
    c) echo "--bits 4 --tiers auto -m 1,16 --shapes l3-8b.o,l3-70b.o" ;;
    *) return 1 ;;
  esac
}
sets=${V55_SETS:-d1}
for round in $(seq 1 "${V55_ROUNDS:-2}"); do
  for set in $sets; do
    args=$(args_of "$set") || { echo "unknown set $set"; exit 2; }
    for side in old new; do
      bin=$old
      [ "$side" = new ] && bin=$new
      # shellcheck disable=SC2086  # args is a word list by design
      timeout 150 "$bin" $args --no-cublas --read-bw-gib 1 \
        --json "$out/ab_${set}_${side}_$round.json" > "$out/ab_${set}_${side}_$round.log" 2>&1
      echo "$set $side round $round: rc=$?"
    done
  done
done
for set in $sets; do
  python3 scripts/perf/ab_summary.py "$out" "$set" > "$out/ab_${set}_table.md" 2>&1
done
cat "$out"/ab_*_table.md
if [ "${V55_FINAL:-0}" = 1 ]; then
  timeout 200 "$new" --bits 8 --tiers auto -m 1,16,256,1024 --read-bw-gib 1 \
    --json "$out/final_int8.json" > "$out/final_int8.log" 2>&1
  echo "final int8 rc=$?"
  grep -E "^(shape|l3)" "$out/final_int8.log" | awk '!seen[$0]++'
fi
bash scripts/pack_out.sh "$out" v55.tar.gz gpu.txt
