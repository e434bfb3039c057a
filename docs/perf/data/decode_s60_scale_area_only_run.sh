#!/usr/bin/env bash
# Stop 60: the scale area without a third mainloop (docs/perf/decode.md, "Stop 60"): builds of
# decode_s60_scale_area_only_probe.patch with -DSAILFISH_PROBE_AREA_ONLY, where an instance with
# the area runs large groups on it or, where the plan takes none (groups of 64), on the
# small-group form. Interleaved rounds, int4 bf16:
#   base      build-dev/base (6422592);
#   only      build-dev/only;
#   base_l2w  build-dev/probe3 (stop 59's l2w);
#   only_l2w  build-dev/onlyl2w (the same with -DSAILFISH_PROBE_WEIGHTS_L2).
# g128 at M = 1 and 16 on the eight Llama-3 shapes, and (base, only) at g64, which the probe sends
# to the small-group form. Device call: carry ["build-dev"], command
# `bash docs/perf/data/decode_s60_scale_area_only_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for t in build-dev/*.tar.gz; do tar xzf "$t"; done
W=/tmp/wo60; mkdir -p $W
shapes=l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up
t0=$SECONDS
for r in 1 2 3; do
  for v in base only base_l2w only_l2w; do
    case $v in base) b=build-dev/base;; only) b=build-dev/only;; base_l2w) b=build-dev/probe3;; only_l2w) b=build-dev/onlyl2w;; esac
    timeout 90 $b/sailfish_bench --tiers auto --no-cublas --shapes $shapes -m 1,16 --replays 7 \
      --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1
    echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
  for v in base only; do
    timeout 90 build-dev/$v/sailfish_bench --tiers auto --no-cublas --shapes $shapes -m 1,16 \
      --group 64 --replays 7 --json $W/g64_${v}_$r.json > $W/g64_${v}_$r.log 2>&1
    echo "g64 $v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/s60_area_only.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
def load(prefix, vs):
    rows = {}
    for v in vs:
        for r in (1, 2, 3):
            try: d = json.load(open(f'/tmp/wo60/{prefix}{v}_{r}.json'))
            except Exception as e: print(prefix, v, r, e); continue
            for x in d['rows']:
                if x['us'] is not None:
                    rows.setdefault((x['shape'], x['M']), {}).setdefault(v, []).append(x['us'])
    return rows
g = load('', ('base', 'only', 'base_l2w', 'only_l2w'))
g64 = load('g64_', ('base', 'only'))
print('shape M base_us only/base base_l2w_us only_l2w/base_l2w | g64 base_us only/base')
for k, d in g.items():
    m = {v: st.median(x) for v, x in d.items()}
    e = {v: st.median(x) for v, x in g64.get(k, {}).items()}
    f = lambda m, a, b: f"{m[a] / m[b]:.3f}" if a in m and b in m else '-'
    print(k[0], k[1], f"{m.get('base', 0):.2f}", f(m, 'only', 'base'), f"{m.get('base_l2w', 0):.2f}",
          f(m, 'only_l2w', 'base_l2w'), '|', f"{e.get('base', 0):.2f}", f(e, 'only', 'base'))
PY
