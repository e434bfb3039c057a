#!/usr/bin/env bash
# Stop 61: the prefill producer's first stages of weights and scale rows issued before
# griddepcontrol.wait (src/prefill/prefill_kernel.cuh), against the landed bench, plus a probe
# that launches no split reduce (wrong output by design: it bounds what a reduce inside the main
# kernel could buy). Binaries built here and carried (build-dev):
#   base  build-dev/base/sailfish_bench  (the landed library of 6422592, unchanged since)
#   new   build/bench/sailfish_bench     (6422592 + prefill_s61_early_weights_rejected.patch)
#   skip  build-dev/skip/sailfish_bench  (6422592 + prefill_s61_skip_reduce_probe.patch,
#         -DSAILFISH_PROBE_SKIP_SPLIT_REDUCE)
# First the whole GPU suite on the new tree, then three interleaved rounds of the eight Llama-3
# shapes at M = 48, 64, 128 and 256, auto tier (the prefill tier at these M), medians.
# Device call: carry ["build-dev"], command `bash docs/perf/data/prefill_s61_early_weights_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && tar xzf build-dev/base_bench.tar.gz && tar xzf build-dev/skip_bench.tar.gz
GPU_TEST_TIMEOUT=200 OUT=$OUT/suite bash scripts/device_round.sh tests-sharded > $OUT/suite.txt 2>&1
tail -4 $OUT/suite.txt
W=/tmp/wp61; mkdir -p $W
args=(--tiers auto --no-cublas --shapes l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up -m 48,64,128,256 --replays 7)
declare -A bin=([base]=build-dev/base/sailfish_bench [new]=build/bench/sailfish_bench [skip]=build-dev/skip/sailfish_bench)
t0=$SECONDS
for r in 1 2 3; do
  for v in base new skip; do
    timeout 120 ${bin[$v]} "${args[@]}" --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1
    echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/prefill_s61_early_weights.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
vs = ('base', 'new', 'skip')
rows, plans = {}, {}
for v in vs:
    for r in (1, 2, 3):
        try: d = json.load(open(f'/tmp/wp61/{v}_{r}.json'))
        except Exception as e: print(v, r, e); continue
        for x in d['rows']:
            k = (x['shape'], x['M'])
            if x['us'] is not None and x['status'] in ('ok', 'check_failed'):
                rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
            if v == 'base': plans[k] = x['launch']
print('shape M base_us new/base skip/base | base plan')
for k, d in rows.items():
    med = {v: st.median(d[v]) for v in vs if v in d}
    b = med.get('base')
    print(k[0], k[1], f"{b:.2f}", ' '.join(f"{med[v] / b:.3f}" if v in med else '-' for v in vs[1:]), '|', plans.get(k, '')[:60])
PY
