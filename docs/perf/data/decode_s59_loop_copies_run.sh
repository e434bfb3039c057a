#!/usr/bin/env bash
# Stop 59's second probe call (docs/perf/decode.md, "Stop 59"): what the loop's own copies cost
# the SMs. Three bench builds of one tree, in interleaved rounds:
#   base  the tree as committed (build-dev/bins.tar.gz, scripts/pack_device_bins.sh);
#   l2w   decode_s59_act_probe.patch with -DSAILFISH_PROBE_WEIGHTS_L2 (build-dev/probe3: every CTA
#         reads the weights of strip (strip mod 8), from the L2);
#   nlc   decode_s59_loop_copies_probe.patch (the act probe's patch and one more hunk) with
#         -DSAILFISH_PROBE_NO_LOOP_COPIES (build-dev/probe5): no copies in the loop, which reads
#         the prologue's stages again, so only the prologue touches memory.
# Wrong sums in l2w and nlc (timing only). nlc against l2w is the loop's copies on the SM side;
# nlc against the bare step (bench/wgmma_probe's mma-dq) is the rest of the loop.
# Device call: carry ["build-dev"], command `bash docs/perf/data/decode_s59_loop_copies_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && tar xzf build-dev/s59_probe_bins.tar.gz && tar xzf build-dev/s59_probe5.tar.gz
W=/tmp/w2; mkdir -p $W
args=(--tiers decode --no-cublas --shapes l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up -m 1,16,32 --replays 7)
t0=$SECONDS
for r in 1 2 3; do
  for v in base l2w nlc; do
    case $v in base) b=build/bench/sailfish_bench;; l2w) b=build-dev/probe3/sailfish_bench;; nlc) b=build-dev/probe5/sailfish_bench;; esac
    timeout 90 $b "${args[@]}" --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1; echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/s59_nlc.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
rows = {}
for v in ('base', 'l2w', 'nlc'):
    for r in (1, 2, 3):
        try: d = json.load(open(f'/tmp/w2/{v}_{r}.json'))
        except Exception as e: print(v, r, e); continue
        for x in d['rows']:
            k = (x['shape'], x['M'])
            rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
            rows[k].setdefault('clk', []).append(x.get('sm_clock_mhz') or 0)
print('shape M base_us l2w_us nlc_us nlc/l2w clk_min')
for k, d in rows.items():
    med = {v: st.median(d[v]) for v in ('base', 'l2w', 'nlc') if v in d}
    print(k[0], k[1], ' '.join(f"{med.get(v, 0):.2f}" for v in ('base', 'l2w', 'nlc')),
          f"{med['nlc'] / med['l2w']:.3f}" if med.get('l2w') and med.get('nlc') else '-', f"{min(d['clk']):.0f}")
PY
