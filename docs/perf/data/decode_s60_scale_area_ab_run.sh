#!/usr/bin/env bash
# Stop 60: the scale area (a warp's scale rows copied once in its prologue; launch.cu,
# choose_scale_area) against the landed tree, cold weights, the auto tier, interleaved rounds:
#   base  build-dev/base/sailfish_bench (6422592, the tree before);
#   area  build/bench/sailfish_bench (build-dev/bins.tar.gz, the tree with the area).
# Then the whole GPU suite of the area build. Device call: carry ["build-dev"], command
# `bash docs/perf/data/decode_s60_scale_area_ab_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && tar xzf build-dev/base_bench.tar.gz
W=/tmp/wa60; mkdir -p $W
shapes=l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up
t0=$SECONDS
for r in 1 2 3; do
  for cfg in int4 int8 fp16; do
    case $cfg in int4) extra=(-m 1,4,16);; int8) extra=(--bits 8 -m 1,16);; fp16) extra=(--dtype fp16 -m 1,16);; esac
    for v in base area; do
      case $v in base) b=build-dev/base/sailfish_bench;; area) b=build/bench/sailfish_bench;; esac
      timeout 120 $b --tiers auto --no-cublas --shapes $shapes "${extra[@]}" --replays 7 \
        --json $W/${cfg}_${v}_$r.json > $W/${cfg}_${v}_$r.log 2>&1
      echo "$cfg $v round $r rc=$? $((SECONDS-t0))s"
    done
  done
done
GPU_TEST_TIMEOUT=200 OUT=$W/tests bash scripts/device_round.sh tests-sharded > $W/tests_round.log 2>&1
echo "tests rc=$? $((SECONDS-t0))s"; tail -5 $W/tests/summary.txt
tar czf $OUT/s60_area.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
rows = {}
for cfg in ('int4', 'int8', 'fp16'):
    for v in ('base', 'area'):
        for r in (1, 2, 3):
            try: d = json.load(open(f'/tmp/wa60/{cfg}_{v}_{r}.json'))
            except Exception as e: print(cfg, v, r, e); continue
            for x in d['rows']:
                k = (cfg, x['shape'], x['M'])
                e = rows.setdefault(k, {})
                if x['us'] is not None and x['status'] == 'ok': e.setdefault(v, []).append(x['us'])
                else: e.setdefault('bad', []).append(f"{v}:{x['status']}")
                if v == 'area': e['launch'] = x['launch']
print('cfg shape M base_us area/base bad | area launch')
for k, e in rows.items():
    b = st.median(e['base']) if e.get('base') else None
    a = st.median(e['area']) if e.get('area') else None
    print(*k, f"{b:.2f}" if b else '-', f"{a / b:.3f}" if a and b else '-', ','.join(sorted(set(e.get('bad', [])))) or '-', '|', e.get('launch', '')[-60:])
PY
