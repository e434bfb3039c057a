#!/usr/bin/env bash
# Stop 61, after prefill_s61_early_stage_final_run.sh: the landed form with int8 Stream-K grids
# waiting first (int8 l3-70b.gate_up at M = 64 had run 1.04x with the early stage). Binaries
# built here and carried (build-dev):
#   base  build-dev/base/sailfish_bench  (the landed library of 6422592, unchanged since)
#   new   build/bench/sailfish_bench     (this tree + prefill_s61_int8_stream_k_waits_first_rejected.patch)
# The whole GPU suite on the new tree, then three interleaved rounds, auto tier, medians: int4 at
# M = 48 and 64, int8 at M = 17, 32 and 64, the eight Llama-3 shapes.
# Device call: carry ["build-dev"], command `bash docs/perf/data/prefill_s61_early_stage_int8sk_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && tar xzf build-dev/base_bench.tar.gz
GPU_TEST_TIMEOUT=300 OUT=$OUT/suite bash scripts/device_round.sh tests-sharded > $OUT/suite.txt 2>&1
tail -3 $OUT/suite.txt
W=/tmp/wp61g; mkdir -p $W
shapes=l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up
declare -A bin=([base]=build-dev/base/sailfish_bench [new]=build/bench/sailfish_bench)
t0=$SECONDS
for r in 1 2 3; do
  for v in base new; do
    timeout 120 ${bin[$v]} --tiers auto --no-cublas --shapes $shapes -m 48,64 --replays 7 --json $W/${v}_int4_$r.json > $W/${v}_int4_$r.log 2>&1
    echo "$v int4 round $r rc=$? $((SECONDS-t0))s"
    timeout 120 ${bin[$v]} --tiers auto --no-cublas --bits 8 --shapes $shapes -m 17,32,64 --replays 7 --json $W/${v}_int8_$r.json > $W/${v}_int8_$r.log 2>&1
    echo "$v int8 round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/prefill_s61_early_stage_int8sk.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
for kind in ('int4', 'int8'):
    rows, plans = {}, {}
    for v in ('base', 'new'):
        for r in (1, 2, 3):
            try: d = json.load(open(f'/tmp/wp61g/{v}_{kind}_{r}.json'))
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
            print(k[0], k[1], f"{b:.2f} {n:.2f} {n / b:.3f}", '|', plans.get(k, '')[:50])
PY
