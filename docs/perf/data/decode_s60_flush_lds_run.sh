#!/usr/bin/env bash
# Stop 60's probe call (docs/perf/decode.md, "Stop 60"): upper bounds for two loop redesigns at
# two token tiles, every build reading its weights from the L2 (-DSAILFISH_PROBE_WEIGHTS_L2, as
# stop 59's l2w) so the DRAM is out of the way. Builds of decode_s60_flush_lds_probe.patch
# (stop 59's copy-parts patch and two more hunks), in interleaved rounds:
#   l2w    build-dev/probe3 (stop 59's l2w);
#   nwc    build-dev/probe7: no weight copies in the loop (stop 59's nwc);
#   nfl    build-dev/s60p1: -DSAILFISH_PROBE_FLUSH_NO_CORRECTION, the group flush without the
#          correction's shuffles and adds (scale multiply-adds only; the correction mma kept);
#   nwl    build-dev/s60p2: nwc plus -DSAILFISH_PROBE_WEIGHT_LDS_BROADCAST, every lane reading
#          lane 0's runs (one shared-memory wavefront an LDS.128 instead of four): the weights'
#          shared-memory traffic gone, their instructions kept;
#   both   build-dev/s60p3: nfl and nwl together.
# Wrong sums in all of them (timing only).
# Device call: carry ["build-dev"], command `bash docs/perf/data/decode_s60_flush_lds_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for t in build-dev/*.tar.gz; do tar xzf "$t"; done
W=/tmp/w60; mkdir -p $W
args=(--tiers decode --no-cublas --shapes l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up -m 1,16,32 --replays 7)
t0=$SECONDS
variants=(l2w nwc nfl nwl both)
for r in 1 2 3; do
  for v in "${variants[@]}"; do
    case $v in l2w) b=build-dev/probe3;; nwc) b=build-dev/probe7;; nfl) b=build-dev/s60p1;; nwl) b=build-dev/s60p2;; both) b=build-dev/s60p3;; esac
    timeout 90 $b/sailfish_bench "${args[@]}" --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1; echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/s60_probes.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
vs = ('l2w', 'nwc', 'nfl', 'nwl', 'both')
rows = {}
for v in vs:
    for r in (1, 2, 3):
        try: d = json.load(open(f'/tmp/w60/{v}_{r}.json'))
        except Exception as e: print(v, r, e); continue
        for x in d['rows']:
            k = (x['shape'], x['M'])
            if x['us'] is not None: rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
            rows.setdefault(k, {}).setdefault('clk', []).append(x.get('sm_clock_mhz') or 0)
print('shape M l2w_us ' + ' '.join(v + '/l2w' for v in vs[1:]) + ' clk_min')
for k, d in rows.items():
    med = {v: st.median(d[v]) for v in vs if v in d}
    b = med.get('l2w')
    print(k[0], k[1], f"{b:.2f}" if b else '-', ' '.join(f"{med[v] / b:.3f}" if b and v in med else '-' for v in vs[1:]), f"{min(d['clk']):.0f}")
PY
