#!/usr/bin/env bash
# Stop 58's timing probe of the time after griddepcontrol.wait (docs/perf/decode.md, "Stop 58").
# Four bench builds of one tree, run in three interleaved rounds:
#   base   the tree as committed (build-dev/bins.tar.gz, scripts/pack_device_bins.sh);
#   acts   decode_s58_wait_probe.patch built with -DSAILFISH_PROBE_WAIT=1: the prologue's
#          activation copies issued before the wait, so their fetch leaves the path after it;
#   late   the same patch with -DSAILFISH_PROBE_WAIT=2: the wait just before the epilogue, so only
#          the cross-warp/cluster sums and the stores wait;
#   noconv the patch with -DSAILFISH_PROBE_NO_CONVERSION: the int4 words used as the mma fragments
#          unconverted (wrong sums: its spot check fails; timing only).
# The probe builds are made here (cmake -DCMAKE_CUDA_FLAGS=..., target sailfish_bench) and carried
# as build-dev/probe_bins.tar.gz (build-dev/probe{1,2,3}/sailfish_bench). The bench's activations
# are not written by the previous launch, so acts and late compute the right output there (the
# spot check says so); only base is a correct kernel in general.
# Device call: carry ["build-dev"], command `bash docs/perf/data/decode_s58_wait_probe_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && tar xzf build-dev/probe_bins.tar.gz
W=/tmp/w; mkdir -p $W
args=(--tiers decode --no-cublas --shapes l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-8b.gate_up,l3-70b.gate_up -m 1,16 --replays 7)
t0=$SECONDS
for r in 1 2 3; do
  for v in base acts late noconv; do
    case $v in base) b=build/bench/sailfish_bench;; acts) b=build-dev/probe1/sailfish_bench;; late) b=build-dev/probe2/sailfish_bench;; noconv) b=build-dev/probe3/sailfish_bench;; esac
    timeout 60 $b "${args[@]}" --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1; echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/s58c.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
rows = {}
for v in ('base', 'acts', 'late', 'noconv'):
    for r in (1, 2, 3):
        try: d = json.load(open(f'/tmp/w/{v}_{r}.json'))
        except Exception as e: print(v, r, e); continue
        for x in d['rows']:
            k = (x['shape'], x['M'])
            rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
            rows[k].setdefault('floor', []).append(x['floor_us'] or 0)
            rows[k].setdefault('check_' + v, []).append(bool((x.get('check') or {}).get('passed')))
print('shape M base acts late noconv floor (medians, us)')
for k, d in rows.items():
    med = {v: st.median(d[v]) for v in ('base', 'acts', 'late', 'noconv', 'floor') if v in d}
    print(k[0], k[1], ' '.join(f"{med.get(v, 0):.2f}" for v in ('base', 'acts', 'late', 'noconv', 'floor')), 'checks', all(d.get('check_acts', [False])), all(d.get('check_late', [False])))
PY
