#!/usr/bin/env bash
# Decode v56's device call (perf/decode.md, v56): int8's stage slots with the warp's chunks of one
# (n16 group, chunk) side by side, so the lanes' 128-bit shared loads of a block's words stop
# taking two passes through the banks. Run from the repository root with carry
# ["build-dev/bins.tar.gz", "build-dev/base_bench.tar.gz"]: the binaries of the tree with
# data/decode_v56_int8_slots.patch applied (rejected, so not in the tree) by
# scripts/pack_device_bins.sh, and the bench of the tree before v56 (0ea72d4, whose library is
# 21e9ecf's) as build-dev/base/sailfish_bench, packed with
# `tar czf build-dev/base_bench.tar.gz build-dev/base/sailfish_bench`. Any card: the change is the
# SMs' (their shared-memory banks), not the memory's. Steps:
#   - an A/B of base and new, alternating, V56_ROUNDS rounds (default 3), of the sets
#       d  int8 bf16 g128, auto tier, M = 1, 4, 8, 16 (decode at M <= 11, prefill beyond)
#       t  int8 bf16 g128, decode tier forced, M = 16 and 24 (its two- and three-tile loops)
#       f  int8 fp16 g128, decode tier, M = 1 and 16
#       c  int4 bf16, auto tier, M = 1 and 16, l3-8b.o and l3-70b.o (SASS identical: control)
#     on the Llama-3 8B and 70B shapes, the bench's defaults otherwise, no cuBLAS;
#   - then the GPU suite in shards (V56_SKIP_SUITE=1 leaves it out).
set -uo pipefail
out=${OUT:?}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$out/gpu.txt"
tar xzf build-dev/bins.tar.gz || exit 2
tar xzf build-dev/base_bench.tar.gz || exit 2
new=build/bench/sailfish_bench
old=build-dev/base/sailfish_bench
args_of() {
  case "$1" in
    d) echo "--bits 8 --tiers auto -m 1,4,8,16" ;;
    t) echo "--bits 8 --tiers decode -m 16,24" ;;
    f) echo "--bits 8 --dtype fp16 --tiers decode -m 1,16" ;;
    c) echo "--bits 4 --tiers auto -m 1,16 --shapes l3-8b.o,l3-70b.o" ;;
    *) return 1 ;;
  esac
}
sets=${V56_SETS:-d t f c}
for round in $(seq 1 "${V56_ROUNDS:-3}"); do
  for set in $sets; do
    args=$(args_of "$set") || { echo "unknown set $set"; exit 2; }
    for side in old new; do
      bin=$old
      [ "$side" = new ] && bin=$new
      # shellcheck disable=SC2086  # args is a word list by design
      timeout 120 "$bin" $args --no-cublas --read-bw-gib 1 \
        --json "$out/ab_${set}_${side}_$round.json" > "$out/ab_${set}_${side}_$round.log" 2>&1
      echo "$set $side round $round: rc=$?"
    done
  done
done
# shellcheck disable=SC2086  # sets is a word list by design
python3 scripts/perf/ab_summary.py "$out" $sets > "$out/ab_table.md" 2>&1
if [ "${V56_SKIP_SUITE:-0}" != 1 ]; then
  GPU_TEST_TIMEOUT=170 OUT="$out/suite" timeout 220 bash scripts/device_round.sh tests-sharded \
    > "$out/suite_stdout.txt" 2>&1
  echo "suite rc=$?"
  tail -4 "$out/suite_stdout.txt"
fi
bash scripts/pack_out.sh "$out" v56.tar.gz gpu.txt ab_table.md
cat "$out/ab_table.md"
