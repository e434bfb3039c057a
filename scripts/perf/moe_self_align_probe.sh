#!/usr/bin/env bash
# MoE v3 probe (docs/perf/moe.md): is the self-aligned expert GEMM worth a split grid? At one token,
# each variant's plan timed by sailfish_moe_bench in two interleaved rounds:
#   default  the rule (self-align at one split only);
#   s2self   two clustered splits, self-aligned (SAILFISH_MOE_SELF_ALIGN=1 asks for it);
#   s2align  two clustered splits, the align launch;
#   self     the default split depth, self-aligned where the rule would not (Mixtral down's four).
# Usage (on the device, after scripts/device_round.sh build): scripts/perf/moe_self_align_probe.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/out}
bench=${SAILFISH_BUILD_DIR:-$root/build}/bench/sailfish_moe_bench
args=(--tokens 1 --layers qwen3-30b-a3b,mixtral-8x7b,deepseek-v3)
for round in 1 2; do
  for variant in default s2self s2align self; do
    case "$variant" in
      default) env=() ;;
      s2self) env=(SAILFISH_MOE_SPLITS=2 SAILFISH_MOE_SELF_ALIGN=1) ;;
      s2align) env=(SAILFISH_MOE_SPLITS=2 SAILFISH_MOE_SELF_ALIGN=0) ;;
      self) env=(SAILFISH_MOE_SELF_ALIGN=1) ;;
    esac
    echo "## $variant round $round"
    env "${env[@]}" "$bench" "${args[@]}" 2>&1 | grep '^|' | grep -v -- '---' | grep -v '^| layer'
  done
done > "$out/moe_self_align_probe.log"
# One line a (layer, proj, variant): the rounds' times.
python3 - "$out/moe_self_align_probe.log" <<'PY'
import collections, sys
times = collections.defaultdict(list)
variant = None
for line in open(sys.argv[1]):
    if line.startswith('## '):
        variant = line.split()[1]
        continue
    cells = [c.strip() for c in line.strip().strip('|').split('|')]
    times[(cells[0], cells[1], variant)].append(float(cells[4]))
rows = sorted({(l, p) for l, p, _ in times})
variants = ['default', 's2self', 's2align', 'self']
print('| layer | proj | ' + ' | '.join(variants) + ' |')
print('|---|---|' + '---|' * len(variants))
for l, p in rows:
    print(f'| {l} | {p} | ' + ' | '.join(
        '/'.join(f'{t:.2f}' for t in times[(l, p, v)]) for v in variants) + ' |')
PY
