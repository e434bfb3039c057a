#!/usr/bin/env bash
# Stop 70's device call for decode v55 (perf/decode.md, v55): the H200 answer stop 69 could not
# get, and tune() on the new int8 loop. Run from the repository root with carry
# ["build-dev/bins.tar.gz", "build-dev/old_bench.tar.gz"] (all of build-dev exceeds the 64 MiB
# carry); binaries as decode_v55_int8_split_run.sh says (scripts/pack_device_bins.sh, and
# efd8431's bench as build-dev/old_bench.tar.gz). Steps, the target's row first so that a call cut
# short still answers it:
#   - on any card: the new build beside cuBLAS bf16, int8 bf16 g128, auto tier, M = 1, 16
#     (auto_int8.json, its table printed at once);
#   - on an H200 only: the A/B of v55's set d1 (int8 bf16 g128, auto tier, M = 1, 4, 8), four
#     rounds, through decode_v55_int8_split_run.sh (the H100 has run it three times);
#   - on any card: tune() over the M = 1 rows with every candidate timed again in the
#     bench's harness (tuned_int8.json), and scripts/perf/tune_table.py on the two.
set -uo pipefail
out=${OUT:?}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$out/gpu.txt"
tar xzf build-dev/bins.tar.gz || exit 2
new=build/bench/sailfish_bench
timeout 100 "$new" --bits 8 --tiers auto -m 1,16 --read-bw-gib 1 \
  --json "$out/auto_int8.json" > "$out/auto_int8.log" 2>&1
echo "auto int8 rc=$?"
grep -E "^(shape|l3)" "$out/auto_int8.log" | awk '!seen[$0]++'
if grep -q H200 "$out/gpu.txt"; then
  mkdir -p "$out/ab"
  OUT="$out/ab" V55_SKIP_SUITE=1 V55_SETS=d1 V55_ROUNDS=4 \
    bash docs/perf/data/decode_v55_int8_split_run.sh > "$out/ab_stdout.txt" 2>&1
  echo "ab rc=$?"
  sed -n '/^| shape/,$p' "$out/ab_stdout.txt" | grep -v "^packed"
fi
timeout 100 "$new" --bits 8 --tiers auto -m 1 --tune --tune-recheck --no-cublas --read-bw-gib 1 \
  --json "$out/tuned_int8.json" > "$out/tuned_int8.log" 2>&1
echo "tuned int8 rc=$?"
python3 scripts/perf/tune_table.py "$out/auto_int8.json" "$out/tuned_int8.json" \
  > "$out/tune_table.md" 2>&1
cat "$out/tune_table.md"
bash scripts/pack_out.sh "$out" s70.tar.gz gpu.txt
