#!/usr/bin/env bash
# Stop 59's third probe call (docs/perf/decode.md, "Stop 59"): which part of the loop's copies
# costs the SMs. Every build reads its weights from the L2 (-DSAILFISH_PROBE_WEIGHTS_L2, as l2w),
# so the DRAM is out of the way; builds of decode_s59_copy_parts_probe.patch (the loop-copies
# patch and two more hunks), in interleaved rounds:
#   l2w      build-dev/probe3 (the second call's l2w);
#   nlc      build-dev/probe5: no copies in the loop at all (the second call's nlc; it reads its
#            weights from DRAM in the prologue only);
#   a1       -DSAILFISH_PROBE_ACT_COPIES=1 (probe6): a quarter of the activation copies;
#   nwc      -DSAILFISH_PROBE_NO_LOOP_WEIGHT_COPIES (probe7): the loop copies activations and
#            scales, not weights;
#   nowait   -DSAILFISH_PROBE_NO_LOOP_WAIT (probe8): every copy issued, none waited for in the loop
#            (its reads race its copies).
# Wrong sums in all of them (timing only).
# Device call: carry ["build-dev"], command `bash docs/perf/data/decode_s59_copy_parts_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/s59_probe3.tar.gz && tar xzf build-dev/s59_probe5.tar.gz && tar xzf build-dev/s59_probe678.tar.gz
W=/tmp/w3; mkdir -p $W
args=(--tiers decode --no-cublas --shapes l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up -m 1,16,32 --replays 7)
t0=$SECONDS
variants=(l2w nlc a1 nwc nowait)
for r in 1 2 3; do
  for v in "${variants[@]}"; do
    case $v in l2w) b=build-dev/probe3;; nlc) b=build-dev/probe5;; a1) b=build-dev/probe6;; nwc) b=build-dev/probe7;; nowait) b=build-dev/probe8;; esac
    timeout 90 $b/sailfish_bench "${args[@]}" --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1; echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/s59_parts.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
vs = ('l2w', 'nlc', 'a1', 'nwc', 'nowait')
rows = {}
for v in vs:
    for r in (1, 2, 3):
        try: d = json.load(open(f'/tmp/w3/{v}_{r}.json'))
        except Exception as e: print(v, r, e); continue
        for x in d['rows']:
            k = (x['shape'], x['M'])
            rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
            rows[k].setdefault('clk', []).append(x.get('sm_clock_mhz') or 0)
print('shape M l2w_us ' + ' '.join(v + '/l2w' for v in vs[1:]) + ' clk_min')
for k, d in rows.items():
    med = {v: st.median(d[v]) for v in vs if v in d}
    b = med.get('l2w')
    print(k[0], k[1], f"{b:.2f}" if b else '-', ' '.join(f"{med[v] / b:.3f}" if b and v in med else '-' for v in vs[1:]), f"{min(d['clk']):.0f}")
PY
