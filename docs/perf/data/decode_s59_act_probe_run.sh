#!/usr/bin/env bash
# Stop 59's probes (docs/perf/decode.md, "Stop 59"), one device call:
#   1. sailfish_wgmma_probe (bench/wgmma_probe, built here, carried as build-dev/wgmma_probe): the
#      mma-dq step against mma-nc, the same step without its conversion, at 8, 16 and 32 tokens;
#   2. four bench builds of one tree, in interleaved rounds:
#        base  the tree as committed (build-dev/bins.tar.gz, scripts/pack_device_bins.sh);
#        act1  decode_s59_act_probe.patch built with -DSAILFISH_PROBE_ACT_COPIES=1: a lane issues
#              only the first of its activation copies (rows 0-3 of the CTA's tokens), so a block
#              fetches a quarter of its activation bytes at 16 tokens, an eighth at 32;
#        act2  the same with 2 (half at 16 tokens, a quarter at 32);
#        l2w   the patch built with -DSAILFISH_PROBE_WEIGHTS_L2: every CTA reads the weights of
#              strip (strip mod 8), 2 MB at most, so the weights come from the L2, not DRAM.
#      The rows the probes leave out are stale shared memory, so act1 and act2 compute wrong sums
#      beyond M = 4 (their spot checks fail; timing only); at M = 1 they are the base kernel. l2w's
#      sums are wrong everywhere (timing only).
# Two interleaved rounds (medians of two = means), to fit the session's device time.
# Device call: carry ["build-dev"], command `bash docs/perf/data/decode_s59_act_probe_run.sh`.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar xzf build-dev/bins.tar.gz && tar xzf build-dev/s59_probe_bins.tar.gz
W=/tmp/w; mkdir -p $W
build-dev/wgmma_probe > $OUT/wgmma_probe.txt 2>&1; echo "wgmma_probe rc=$?"
grep -E '^(form|mma-)' $OUT/wgmma_probe.txt
args=(--tiers decode --no-cublas --shapes l3-8b.o,l3-8b.qkv,l3-8b.down,l3-70b.o,l3-70b.qkv,l3-70b.down,l3-8b.gate_up,l3-70b.gate_up -m 1,16,32 --replays 7)
t0=$SECONDS
for r in 1 2; do
  for v in base act1 act2 l2w; do
    case $v in base) b=build/bench/sailfish_bench;; act1) b=build-dev/probe1/sailfish_bench;; act2) b=build-dev/probe2/sailfish_bench;; l2w) b=build-dev/probe3/sailfish_bench;; esac
    timeout 90 $b "${args[@]}" --json $W/${v}_$r.json > $W/${v}_$r.log 2>&1; echo "$v round $r rc=$? $((SECONDS-t0))s"
  done
done
tar czf $OUT/s59_act.tar.gz -C $W .
python3 - <<'PY'
import json, statistics as st
rows = {}
for v in ('base', 'act1', 'act2', 'l2w'):
    for r in (1, 2):
        try: d = json.load(open(f'/tmp/w/{v}_{r}.json'))
        except Exception as e: print(v, r, e); continue
        for x in d['rows']:
            k = (x['shape'], x['M'])
            rows.setdefault(k, {}).setdefault(v, []).append(x['us'])
            rows[k].setdefault('floor', []).append(x['floor_us'] or 0)
            rows[k].setdefault('clk', []).append(x.get('sm_clock_mhz') or 0)
print('shape M base_us act1_x act2_x l2w_x floor_us base_x_floor clk_min')
for k, d in rows.items():
    med = {v: st.median(d[v]) for v in ('base', 'act1', 'act2', 'l2w', 'floor') if v in d}
    b = med.get('base', 0)
    print(k[0], k[1], f"{b:.2f}", ' '.join(f"{med.get(v, 0) / b:.3f}" if b else '-' for v in ('act1', 'act2', 'l2w')),
          f"{med.get('floor', 0):.2f}", f"{b / med['floor']:.3f}" if med.get('floor') else '-', f"{min(d['clk']):.0f}")
PY
