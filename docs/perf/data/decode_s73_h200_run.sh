#!/usr/bin/env bash
# Stop 73's device call (perf/decode.md, "Stop 73"): the current tree's standing in one H200 run.
# Run from the repository root with carry ["build-dev/bins.tar.gz", "build-dev/old_bench.tar.gz"]
# (binaries as decode_v55_s70_run.sh says: the new tree by scripts/pack_device_bins.sh, the old
# bench from efd8431, v55's parent). On an H200 only (another card: nothing run, exit 3). Steps:
#   - decode_s65_h200_run.sh without its tune() runs: the final set (scripts/device_decode_final.sh:
#     int4 auto M = 1-64 with cuBLAS bf16 and the floor, int8 M = 1 and 16, deterministic mode,
#     PDL off, the router GEMVs), so the standing table comes from one run of one tree instead of
#     stop 66's int4 and stop 72's int8, then the GPU suite in shards (no H200 has run it on v55's
#     tree; S66_SKIP_SUITE=1 leaves it out);
#   - the int8 target row's last open pairing (S73_SKIP_PROBE=1 leaves it out): l3-70b.o at M = 1,
#     both conversions (old: efd8431's nibbles; new: v55's seven-low-bits/top-bit), each at the
#     rule's plan and at six stages a warp (one more stage of weights before the wait), alternating,
#     S73_ROUNDS rounds (default 3). Stop 72 timed the old form at the rule only (84.0-84.6% of the
#     roofline) and six stages on the new form only (0.993x the rule on the H200).
set -uo pipefail
out=${OUT:?}
S65_SKIP_TUNE=1 bash docs/perf/data/decode_s65_h200_run.sh
rc=$?
[ "$rc" = 3 ] && exit 3  # not an H200
tar xzf build-dev/old_bench.tar.gz || exit 2
new=build/bench/sailfish_bench
old=build-dev/old/sailfish_bench
if [ "${S73_SKIP_PROBE:-0}" != 1 ]; then
  for round in $(seq 1 "${S73_ROUNDS:-3}"); do
    for side in old new; do
      bin=$old
      [ "$side" = new ] && bin=$new
      for plan in rule w6; do
        forced=()  # the rule: nothing forced; w6: its two splits at six stages a warp
        [ "$plan" = w6 ] && forced=(SAILFISH_DECODE_SPLITS=2 SAILFISH_DECODE_WARP_STAGES=6)
        env "${forced[@]}" \
          timeout 60 "$bin" --bits 8 --tiers decode -m 1 --shapes l3-70b.o --no-cublas \
          --read-bw-gib 1 --json "$out/ab_${plan}_${side}_$round.json" \
          > "$out/ab_${plan}_${side}_$round.log" 2>&1
        echo "probe $side $plan round $round: rc=$?"
      done
    done
  done
  # new/old at each plan; six stages against the rule is the two tables' rows read together.
  python3 scripts/perf/ab_summary.py "$out" rule w6 > "$out/probe_table.md" 2>&1
fi
bash scripts/pack_out.sh "$out" s73_probe.tar.gz s65_summary.txt probe_table.md gpu.txt
cat "$out/probe_table.md" 2>/dev/null
