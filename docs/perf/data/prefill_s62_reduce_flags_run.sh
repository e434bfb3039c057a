#!/usr/bin/env bash
# Stop 62: the split grid's reduce summing each strip as its splits land instead of after the main
# grid ends (rejected; the last form is data/prefill_s62_reduce_flags_rejected.patch). The same
# script ran every variant, v1-v8 (docs/perf/prefill.md, "Stop 62"), and the first A/B of the
# reduce's early launch_dependents (landed). Binaries built here and carried (build-dev):
#   base  build-dev/head_bench.tar.gz -> base/sailfish_bench  (the landed library of b704194)
#   new   build-dev/bins.tar.gz -> build/...                  (the variant's tree)
# The whole GPU suite on the new tree (the first call only; SKIP_SUITE=1 for the others), memcheck
# on the split-reduce tests, then three interleaved rounds of the eight Llama-3 shapes, int4 at
# M = 33, 48, 64, 128 and int8 at M = 17, 32, 64 (auto tier: the prefill tier at these M), medians.
# Device call: carry ["build-dev"], command
#   [SKIP_SUITE=1] bash docs/perf/data/prefill_s62_reduce_flags_run.sh
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && mkdir -p base && tar xzf build-dev/head_bench.tar.gz
if [ "${SKIP_SUITE:-0}" = 0 ]; then
GPU_TEST_TIMEOUT=200 OUT=$OUT/suite bash scripts/device_round.sh tests-sharded > $OUT/suite.txt 2>&1
tail -3 $OUT/suite.txt
fi
filter='PrefillSplitReduce*:PrefillDeterminism*:PrefillOddShapes*:PrefillLaunch*:PrefillOddUnits*'
SAILFISH_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 3 \
  build/tests/sailfish_gpu_tests --gtest_filter="$filter" > $OUT/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep -c 'OK \]' $OUT/memcheck.txt) ok, $(grep 'ERROR SUMMARY' $OUT/memcheck.txt | tail -1)"
W=/tmp/wp62; mkdir -p $W
shapes=l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up
declare -A bin=([base]=base/sailfish_bench [new]=build/bench/sailfish_bench)
t0=$SECONDS
for r in 1 2 3; do
  for v in base new; do
    timeout 150 ${bin[$v]} --tiers auto --no-cublas --shapes $shapes -m 33,48,64,128 --replays 7 --json $W/${v}_int4_$r.json > $W/${v}_int4_$r.log 2>&1
    echo "$v int4 round $r rc=$? $((SECONDS-t0))s"
    timeout 150 ${bin[$v]} --tiers auto --no-cublas --bits 8 --shapes $shapes -m 17,32,64 --replays 7 --json $W/${v}_int8_$r.json > $W/${v}_int8_$r.log 2>&1
    echo "$v int8 round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/prefill_s62_reduce_counters.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
for kind in ('int4', 'int8'):
    rows, plans = {}, {}
    for v in ('base', 'new'):
        for r in (1, 2, 3):
            try: d = json.load(open(f'/tmp/wp62/{v}_{kind}_{r}.json'))
            except Exception as e: print(v, kind, r, e); continue
            for x in d['rows']:
                k = (x['shape'], x['M'])
                if x['us'] is not None and x['status'] == 'ok':
                    rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
                if v == 'new': plans[k] = x['launch']
    print(kind, ': shape M base_us new_us new/base | plan')
    for k, d in rows.items():
        if 'base' in d and 'new' in d:
            b, n = st.median(d['base']), st.median(d['new'])
            print(k[0], k[1], f"{b:.2f} {n:.2f} {n / b:.3f}", '|', plans.get(k, '')[:44])
PY
