#!/usr/bin/env bash
# Stop 58's one-tile probe (docs/perf/decode.md, "Stop 58"): at M = 9-16, one token tile a CTA
# and two M groups (twice the CTAs and warps an SM after the wait; each weight block read by two
# CTAs) against the plan's two tiles a CTA. tiles1 is decode_s58_wait_probe.patch built with
# -DSAILFISH_PROBE_MAX_TILES=1 (cmake -DCMAKE_CUDA_FLAGS=..., target sailfish_bench), carried as
# build-dev/probe4_bins.tar.gz (build-dev/probe4/sailfish_bench); base is the tree as committed
# (build-dev/bins.tar.gz). Device call: carry ["build-dev"], command
# `bash docs/perf/data/decode_s58_one_tile_probe_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && tar xzf build-dev/probe4_bins.tar.gz
W=/tmp/w; mkdir -p $W
args=(--tiers decode --no-cublas --shapes l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up -m 1,12,16 --replays 7)
t0=$SECONDS
for r in 1 2 3; do
  for v in base tiles1; do
    case $v in base) b=build/bench/sailfish_bench;; tiles1) b=build-dev/probe4/sailfish_bench;; esac
    timeout 90 $b "${args[@]}" --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1; echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/s58d.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
rows = {}
for v in ('base', 'tiles1'):
    for r in (1, 2, 3):
        try: d = json.load(open(f'/tmp/w/{v}_{r}.json'))
        except Exception as e: print(v, r, e); continue
        for x in d['rows']:
            k = (x['shape'], x['M'])
            e = rows.setdefault(k, {})
            e.setdefault(v, []).append(x['us']); e.setdefault('floor', []).append(x['floor_us'] or 0)
            e.setdefault('ok_' + v, []).append(bool((x.get('check') or {}).get('passed')))
            e['launch_' + v] = x['launch'][19:80]
print('shape M base tiles1 ratio floor ok launch_tiles1')
for k, e in rows.items():
    b, t = st.median(e['base']), st.median(e['tiles1'])
    print(k[0], k[1], f"{b:.2f} {t:.2f} {t/b:.3f} {st.median(e['floor']):.2f}", all(e['ok_tiles1']), e['launch_tiles1'])
PY
