#!/usr/bin/env bash
# Stop 60: does the prefill tier's plan rule leave time on the table at M = 48 and 64, where
# tune() times only the rule's prefill plan (src/api/tune.cpp)? The landed bench (build-dev/base,
# the tree of 6422592) on the eight Llama-3 shapes, tier prefill, each plan forced through the
# environment, in interleaved rounds:
#   rule    the plan's own choice;
#   s1..s8  SAILFISH_PREFILL_SPLITS=s (no Stream-K);
#   sk      SAILFISH_PREFILL_STREAM_K=1 (the Stream-K grid; no splits);
#   t128    SAILFISH_PREFILL_TOKENS=128 (the rule's depth for that width).
# Device call: carry ["build-dev"], command `bash docs/perf/data/prefill_s60_plan_sweep_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/base_bench.tar.gz
W=/tmp/wp60; mkdir -p $W
args=(--tiers prefill --no-cublas --shapes l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up -m 48,64 --replays 7)
variants=(rule s1 s2 s3 s4 s5 s6 s7 s8 sk t128)
t0=$SECONDS
for r in 1 2; do
  for v in "${variants[@]}"; do
    env=()
    case $v in s*[0-9]) env=(SAILFISH_PREFILL_SPLITS=${v#s});; sk) env=(SAILFISH_PREFILL_STREAM_K=1);; t128) env=(SAILFISH_PREFILL_TOKENS=128);; esac
    env "${env[@]}" timeout 90 build-dev/base/sailfish_bench "${args[@]}" --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1
    echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/prefill_s60_sweep.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
vs = ('rule', 's1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 'sk', 't128')
rows, plans = {}, {}
for v in vs:
    for r in (1, 2):
        try: d = json.load(open(f'/tmp/wp60/{v}_{r}.json'))
        except Exception as e: print(v, r, e); continue
        for x in d['rows']:
            k = (x['shape'], x['M'])
            if x['us'] is not None and x['status'] in ('ok', 'check_failed'):
                rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
            if v == 'rule': plans[k] = x['launch']
print('shape M rule_us ' + ' '.join(v for v in vs[1:]) + ' | best | rule plan')
for k, d in rows.items():
    med = {v: st.median(d[v]) for v in vs if v in d}
    b = med.get('rule')
    best = min(med, key=med.get)
    print(k[0], k[1], f"{b:.2f}" if b else '-', ' '.join(f"{med[v] / b:.3f}" if b and v in med else '-' for v in vs[1:]), '|', best, f"{med[best] / b:.3f}" if b else '', '|', plans.get(k, '')[:80])
PY
