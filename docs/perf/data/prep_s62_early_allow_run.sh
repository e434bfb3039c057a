#!/usr/bin/env bash
# Stop 62: the prep kernel (act-order permutation, aligned activation copy, output init) and the
# decode tier's split reduce let the next grid in (launch_dependents) before their
# griddepcontrol.wait instead of after it. Binaries built here and carried (build-dev):
#   base  build-dev/head_bench.tar.gz -> base/sailfish_bench  (the landed library of c969196)
#   new   build-dev/bins.tar.gz -> build/...                  (this tree)
# Three interleaved rounds, act-order int4 g128 on the eight Llama-3 shapes at M = 1, 16 (decode)
# and 64 (prefill), medians. With CHECK=1 (the second call): act-order int4 at M = 1, 4, 16, act-order
# int8 at M = 1 and 16, and int4 without act-order at M = 1 (no prep kernel: the control), then the
# whole GPU suite.
# Device call: carry ["build-dev"], command `bash docs/perf/data/prep_s62_early_allow_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && mkdir -p base && tar xzf build-dev/head_bench.tar.gz
W=/tmp/wp62p; mkdir -p $W
shapes=l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up
declare -A bin=([base]=base/sailfish_bench [new]=build/bench/sailfish_bench)
for r in 1 2 3; do
  for v in base new; do
    if [ "${CHECK:-0}" = 0 ]; then
      timeout 150 ${bin[$v]} --tiers auto --no-cublas --act-order --shapes $shapes -m 1,16,64 --replays 7 --json $W/${v}_$r.json > /dev/null 2>&1
    else
      timeout 150 ${bin[$v]} --tiers auto --no-cublas --act-order --shapes $shapes -m 1,4,16 --replays 7 --json $W/${v}_$r.json > /dev/null 2>&1
      timeout 150 ${bin[$v]} --tiers auto --no-cublas --act-order --bits 8 --shapes $shapes -m 1,16 --replays 7 --json $W/${v}_i8_$r.json > /dev/null 2>&1
      timeout 150 ${bin[$v]} --tiers auto --no-cublas --shapes $shapes -m 1 --replays 7 --json $W/${v}_plain_$r.json > /dev/null 2>&1
    fi
    echo "$v round $r rc=$?"
  done
done
tar czf $OUT/prep_s62_early_allow.tar.gz -C $W .
[ "${CHECK:-0}" = 0 ] || { GPU_TEST_TIMEOUT=250 OUT=$OUT/suite bash scripts/device_round.sh tests-sharded > $OUT/suite.txt 2>&1; tail -1 $OUT/suite.txt; }
python3 - <<'PY'
import json, statistics as st, math
for kind in ('', 'i8_', 'plain_'):
  rows, plans = {}, {}
  for v in ('base', 'new'):
    for r in (1, 2, 3):
        try: d = json.load(open(f'/tmp/wp62p/{v}_{kind}{r}.json'))
        except Exception as e: continue
        for x in d['rows']:
            k = (x['shape'], x['M'])
            if x['us'] is not None and x['status'] == 'ok':
                rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
            if v == 'new': plans[k] = x['launch']
  ratios = []
  for k, d in rows.items():
    if 'base' in d and 'new' in d:
        b, n = st.median(d['base']), st.median(d['new'])
        ratios.append(n / b)
        print(kind or 'act-order', k[0], k[1], f"{b:.2f} {n:.2f} {n / b:.3f}", '|', plans.get(k, '')[:40])
  if ratios: print(kind or 'act-order', 'geomean', f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.4f}")
PY
