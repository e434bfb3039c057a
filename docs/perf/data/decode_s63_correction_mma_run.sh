#!/usr/bin/env bash
# Stop 63 (v54): the group flush adds each token's offset correction to the sums by one mma a
# column group against a ones fragment, instead of two shuffles and 16 FADD a tile
# (src/decode/warp_split_flush.cuh). Binaries built here and carried (build-dev):
#   base  build-dev/head_bench.tar.gz -> base/sailfish_bench  (the library of 48959e1)
#   new   build-dev/bins.tar.gz -> build/...                  (this tree)
# SETS picks what runs, in this order: suite (the whole GPU suite, first, so a wrong sum shows
# before any timing), int4, int8, fp16, zp (int4 with zero points: the control, whose flush keeps
# the shuffles), int8small (bf16 int8 at M = 1, 4, 8), int8fp16 (fp16 int8 at M = 1, 4, 8). Each
# timing set is ROUNDS interleaved rounds (default 3) of base and new, in alternating order, on the
# eight Llama-3 shapes, auto tier, cold weights, CUDA graphs; the table prints medians.
# With L2=1 both sides are the weights-in-the-L2 probe builds of build-dev/l2w_bench.tar.gz
# (l2base/, l2new/: every CTA reads the weights of strip mod 8, so the DRAM is out of the way, as
# stop 59's l2w; wrong sums, timing only), whose sets are named l2<set>.
# Device call: carry ["build-dev"], command `SETS="suite int4 int8" bash docs/perf/data/decode_s63_correction_mma_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && mkdir -p base && tar xzf build-dev/head_bench.tar.gz
W=/tmp/wp63; mkdir -p $W
tag=""
if [ "${L2:-0}" = 1 ]; then tar xzf build-dev/l2w_bench.tar.gz; tag=l2; fi
shapes=l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up
declare -A bin=([base]=base/sailfish_bench [new]=build/bench/sailfish_bench)
[ -z "$tag" ] || bin=([base]=l2base/sailfish_bench [new]=l2new/sailfish_bench)
declare -A args=([int4]="-m 1,16" [int8]="--bits 8 -m 1,16" [fp16]="--dtype fp16 -m 1,16"
                 [zp]="--zero-points -m 1,16" [int8small]="--bits 8 -m 1,4,8"
                 [int8fp16]="--bits 8 --dtype fp16 -m 1,4,8")
for set in ${SETS:-suite int4}; do
  if [ $set = suite ]; then
    start=$SECONDS
    GPU_TEST_TIMEOUT=250 OUT=$OUT/suite bash scripts/device_round.sh tests-sharded > $OUT/suite.txt 2>&1
    echo "suite: $(tail -1 $OUT/suite.txt) ($((SECONDS - start)) s)"
    continue
  fi
  for r in $(seq ${ROUNDS:-3}); do
    order="base new"; [ $((r % 2)) = 0 ] && order="new base"  # no side always runs first
    for v in $order; do
      start=$SECONDS
      timeout 150 ${bin[$v]} --tiers auto --no-cublas --shapes $shapes ${args[$set]} --replays 7 \
        --json $W/$tag${set}_${v}_$r.json > /dev/null 2>&1
      echo "$tag$set $v round $r rc=$? ($((SECONDS - start)) s)"
    done
  done
done
tar czf $OUT/decode_s63_correction_mma$tag.tar.gz -C $W .
python3 - <<'PY'
import glob, json, math, os, statistics as st
sets = sorted({os.path.basename(f).split('_')[0] for f in glob.glob('/tmp/wp63/*_new_*.json')})
for s in sets:
    rows, plans = {}, {}
    for v in ('base', 'new'):
        for f in glob.glob(f'/tmp/wp63/{s}_{v}_*.json'):
            for x in json.load(open(f))['rows']:
                k = (x['shape'], x['M'])
                if x['us'] is not None and x['status'] == 'ok':
                    rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
                if v == 'new': plans[k] = x['launch']
    ratios = {}
    for k, d in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if 'base' in d and 'new' in d:
            b, n = st.median(d['base']), st.median(d['new'])
            ratios.setdefault(k[1], []).append(n / b)
            print(s, k[0], k[1], f"{b:.2f} {n:.2f} {n / b:.3f}", '|', plans.get(k, '')[:44])
    for m, rs in ratios.items():
        print(s, 'M =', m, 'geomean', f"{math.exp(sum(map(math.log, rs)) / len(rs)):.4f}",
              f"range {min(rs):.3f}-{max(rs):.3f}")
PY
