#!/usr/bin/env bash
# Stop 60: where the scale area's time goes (docs/perf/decode.md, "Stop 60"), int4 bf16 g128,
# interleaved rounds:
#   base      build-dev/base (6422592);
#   area      build-dev/area: decode_s60_scale_area_rejected.patch;
#   aoff      build-dev/aoff: decode_s60_scale_area_diag_probe.patch (the area patch's sources and
#             two probe hunks) with -DSAILFISH_PROBE_NO_SCALE_AREA, so no plan takes the area (what
#             its code alone costs: the third mainloop, the registers);
#   base_l2w  build-dev/probe3 (stop 59's l2w: weights from the L2);
#   area_l2w  build-dev/al2w: the diag patch with -DSAILFISH_PROBE_WEIGHTS_L2.
# Device call: carry ["build-dev"], command `bash docs/perf/data/decode_s60_scale_area_diag_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for t in build-dev/*.tar.gz; do tar xzf "$t"; done
W=/tmp/wd60; mkdir -p $W
args=(--tiers auto --no-cublas --shapes l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up -m 1,16 --replays 7)
t0=$SECONDS
variants=(base area aoff base_l2w area_l2w)
for r in 1 2 3; do
  for v in "${variants[@]}"; do
    case $v in base) b=build-dev/base;; area) b=build-dev/area;; aoff) b=build-dev/aoff;; base_l2w) b=build-dev/probe3;; area_l2w) b=build-dev/al2w;; esac
    timeout 90 $b/sailfish_bench "${args[@]}" --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1
    echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/s60_area_diag.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
vs = ('base', 'area', 'aoff', 'base_l2w', 'area_l2w')
rows = {}
for v in vs:
    for r in (1, 2, 3):
        try: d = json.load(open(f'/tmp/wd60/{v}_{r}.json'))
        except Exception as e: print(v, r, e); continue
        for x in d['rows']:
            k = (x['shape'], x['M'])
            if x['us'] is not None: rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
print('shape M base_us area/base aoff/base base_l2w_us area_l2w/base_l2w')
for k, d in rows.items():
    m = {v: st.median(d[v]) for v in vs if v in d}
    f = lambda a, b: f"{m[a] / m[b]:.3f}" if a in m and b in m else '-'
    print(k[0], k[1], f"{m.get('base', 0):.2f}", f('area', 'base'), f('aoff', 'base'), f"{m.get('base_l2w', 0):.2f}", f('area_l2w', 'base_l2w'))
PY
