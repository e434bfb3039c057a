#!/usr/bin/env bash
# Stop 60's second probe call (docs/perf/decode.md, "Stop 60"): what the loop's scale-row copies
# cost, every build reading its weights from the L2 (-DSAILFISH_PROBE_WEIGHTS_L2, as stop 59's
# l2w). Builds of decode_s60_meta_probe.patch (decode_s60_flush_lds_probe.patch and one more
# hunk), in interleaved rounds:
#   l2w      build-dev/probe3 (stop 59's l2w);
#   nwc      build-dev/probe7: no weight copies in the loop (stop 59's nwc);
#   nmc      build-dev/s60p4: -DSAILFISH_PROBE_NO_LOOP_META_COPIES, the loop copies weights and
#            activations but no scale rows (the flushes read the prologue's rows again);
#   nmc_nfl  build-dev/s60p5: nmc and -DSAILFISH_PROBE_FLUSH_NO_CORRECTION together.
# Wrong sums in all of them (timing only).
# Device call: carry ["build-dev"], command `bash docs/perf/data/decode_s60_meta_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for t in build-dev/*.tar.gz; do tar xzf "$t"; done
W=/tmp/w61; mkdir -p $W
args=(--tiers decode --no-cublas --shapes l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up -m 1,16,32 --replays 7)
t0=$SECONDS
variants=(l2w nwc nmc nmc_nfl)
for r in 1 2 3; do
  for v in "${variants[@]}"; do
    case $v in l2w) b=build-dev/probe3;; nwc) b=build-dev/probe7;; nmc) b=build-dev/s60p4;; nmc_nfl) b=build-dev/s60p5;; esac
    timeout 90 $b/sailfish_bench "${args[@]}" --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1; echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/s60_meta.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
vs = ('l2w', 'nwc', 'nmc', 'nmc_nfl')
rows = {}
for v in vs:
    for r in (1, 2, 3):
        try: d = json.load(open(f'/tmp/w61/{v}_{r}.json'))
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
