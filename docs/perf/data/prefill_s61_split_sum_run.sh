#!/usr/bin/env bash
# Stop 61: the split grid's splits summed inside the main kernel by each tile's last split (tagged
# arrival counters, src/prefill/split_arrival.h) instead of a second, reduce launch. Binaries
# built here and carried (build-dev):
#   base  build-dev/base/sailfish_bench  (the landed library of 6422592, unchanged since)
#   new   build/bench/sailfish_bench     (6422592 + prefill_s61_split_sum_rejected.patch, the v2
#         form; the first call ran v1, whose sum step went through ordered_sum<8>)
# The whole GPU suite on the new tree, memcheck on the split-sum tests, then three interleaved
# rounds of the eight Llama-3 shapes at M = 48, 64, 128 and 256, auto tier (the prefill tier at
# these M), medians; the same for deterministic mode at M = 64 and 128.
# Device call: carry ["build-dev"], command `bash docs/perf/data/prefill_s61_split_sum_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && tar xzf build-dev/base_bench.tar.gz
GPU_TEST_TIMEOUT=200 OUT=$OUT/suite bash scripts/device_round.sh tests-sharded > $OUT/suite.txt 2>&1
tail -3 $OUT/suite.txt
SAILFISH_REQUIRE_GPU=1 timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 \
  build/tests/sailfish_gpu_tests --gtest_filter='PrefillSplitReduce*:PrefillDeterminism*:PrefillOddShapes*:PrefillLaunch*' \
  > $OUT/memcheck.txt 2>&1
echo "memcheck rc=$? $(grep -c 'OK \]' $OUT/memcheck.txt) ok, $(grep 'ERROR SUMMARY' $OUT/memcheck.txt | tail -1)"
W=/tmp/wp61b; mkdir -p $W
shapes=l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up
declare -A bin=([base]=build-dev/base/sailfish_bench [new]=build/bench/sailfish_bench)
t0=$SECONDS
for r in 1 2 3; do
  for v in base new; do
    timeout 120 ${bin[$v]} --tiers auto --no-cublas --shapes $shapes -m 48,64,128,256 --replays 7 --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1
    echo "$v round $r rc=$? $((SECONDS-t0))s"
    timeout 120 ${bin[$v]} --tiers auto --no-cublas --deterministic --shapes $shapes -m 64,128 --replays 7 --json $W/${v}_det_$r.json > $W/${v}_det_$r.log 2>&1
    echo "$v det round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/prefill_s61_split_sum.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
for kind in ('', 'det_'):
    rows, plans = {}, {}
    for v in ('base', 'new'):
        for r in (1, 2, 3):
            try: d = json.load(open(f'/tmp/wp61b/{v}_{kind}{r}.json'))
            except Exception as e: print(v, kind, r, e); continue
            for x in d['rows']:
                k = (x['shape'], x['M'])
                if x['us'] is not None and x['status'] == 'ok':
                    rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
                if v == 'new': plans[k] = x['launch']
    print('deterministic' if kind else 'default', ': shape M base_us new_us new/base | plan')
    for k, d in rows.items():
        if 'base' in d and 'new' in d:
            b, n = st.median(d['base']), st.median(d['new'])
            print(k[0], k[1], f"{b:.2f} {n:.2f} {n / b:.3f}", '|', plans.get(k, '')[:50])
PY
