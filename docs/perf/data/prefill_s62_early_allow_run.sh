#!/usr/bin/env bash
# Stop 62: the split reduce and the Stream-K fixup let the next grid in (launch_dependents) before
# their griddepcontrol.wait instead of after it. Binaries built here and carried (build-dev):
#   base  build-dev/head_bench.tar.gz -> base/sailfish_bench  (the landed library of b704194)
#   new   build-dev/bins.tar.gz -> build/...                  (this tree)
# Five interleaved rounds of the six Llama-3 shapes whose plans split (int4 at M = 33 and 64, int8
# at M = 17 and 32) and l3-70b.gate_up (Stream-K) at M = 48 and 64, medians.
# Device call: carry ["build-dev"], command `bash docs/perf/data/prefill_s62_early_allow_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && mkdir -p base && tar xzf build-dev/head_bench.tar.gz
W=/tmp/wp62a; mkdir -p $W
shapes=l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down
declare -A bin=([base]=base/sailfish_bench [new]=build/bench/sailfish_bench)
for r in 1 2 3 4 5; do
  for v in base new; do
    timeout 150 ${bin[$v]} --tiers auto --no-cublas --shapes $shapes -m 33,64 --replays 7 --json $W/${v}_int4_$r.json > /dev/null 2>&1
    timeout 150 ${bin[$v]} --tiers auto --no-cublas --bits 8 --shapes $shapes -m 17,32 --replays 7 --json $W/${v}_int8_$r.json > /dev/null 2>&1
    timeout 150 ${bin[$v]} --tiers auto --no-cublas --shapes l3-70b.gate_up -m 48,64 --replays 7 --json $W/${v}_sk_$r.json > /dev/null 2>&1
  done
done
tar czf $OUT/prefill_s62_early_allow.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st, math
for kind in ('int4', 'int8', 'sk'):
    rows = {}
    for v in ('base', 'new'):
        for r in range(1, 6):
            try: d = json.load(open(f'/tmp/wp62a/{v}_{kind}_{r}.json'))
            except Exception as e: print(v, kind, r, e); continue
            for x in d['rows']:
                if x['us'] is not None and x['status'] == 'ok':
                    rows.setdefault((x['shape'], x['M']), {}).setdefault(v, []).append(x['us'])
    ratios = []
    for k, d in rows.items():
        b, n = st.median(d['base']), st.median(d['new'])
        ratios.append(n / b)
        print(kind, k[0], k[1], f"{b:.2f} {n:.2f} {n / b:.3f}", 'spread base', f"{(max(d['base'])-min(d['base']))/b:.3f}")
    print(kind, 'geomean', f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.4f}")
PY
