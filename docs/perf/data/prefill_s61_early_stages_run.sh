#!/usr/bin/env bash
# Stop 61, after prefill_s61_early_weights_run.sh: the weights and scale rows of only the first
# one or two pipeline stages issued before griddepcontrol.wait, so the first stage's activations
# queue behind at most two stages of weights (the rejected form issued all seven). Binaries built
# here and carried (build-dev):
#   base  build-dev/base/sailfish_bench  (the landed library of 6422592, unchanged since)
#   e1    build-dev/e1/sailfish_bench    (6422592 + prefill_s61_early_stages_probe.patch,
#         -DSAILFISH_PROBE_EARLY_STAGES=1)
#   e2    build-dev/e2/sailfish_bench    (the same, =2)
# Three interleaved rounds of the eight Llama-3 shapes at M = 48, 64, 128 and 256, auto tier,
# medians. Device call: carry ["build-dev"], command
# `bash docs/perf/data/prefill_s61_early_stages_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/base_bench.tar.gz && tar xzf build-dev/early_benches.tar.gz
W=/tmp/wp61e; mkdir -p $W
shapes=l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up
t0=$SECONDS
for r in 1 2 3; do
  for v in base e1 e2; do
    timeout 120 build-dev/$v/sailfish_bench --tiers auto --no-cublas --shapes $shapes -m 48,64,128,256 --replays 7 --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1
    echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/prefill_s61_early_stages.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
vs = ('base', 'e1', 'e2')
rows, plans = {}, {}
for v in vs:
    for r in (1, 2, 3):
        try: d = json.load(open(f'/tmp/wp61e/{v}_{r}.json'))
        except Exception as e: print(v, r, e); continue
        for x in d['rows']:
            k = (x['shape'], x['M'])
            if x['us'] is not None and x['status'] == 'ok':
                rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
            if v == 'base': plans[k] = x['launch']
print('shape M base_us e1/base e2/base | plan')
for k, d in rows.items():
    med = {v: st.median(d[v]) for v in vs if v in d}
    b = med['base']
    print(k[0], k[1], f"{b:.2f}", ' '.join(f"{med[v] / b:.3f}" if v in med else '-' for v in vs[1:]), '|', plans.get(k, '')[:50])
PY
