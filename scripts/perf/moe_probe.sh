#!/usr/bin/env bash
# A MoE plan probe: sailfish_moe_bench run once a variant (an environment of SAILFISH_MOE_*
# settings) in MOE_PROBE_ROUNDS interleaved rounds (default 2), then one line a (layer, proj,
# tokens) with every variant's times, round by round. The probes of docs/perf/moe.md call it:
#   scripts/perf/moe_probe.sh NAME "BENCH ARGS" VARIANT=[VAR=VALUE[,VAR=VALUE...]] ...
# e.g. moe_probe.sh splits "--tokens 1 --layers mixtral-8x7b" default= s2=SAILFISH_MOE_SPLITS=2
# (an empty environment: the plan's rules). The bench's table rows go to $OUT/moe_NAME_probe.log,
# each round's under a "## VARIANT round R" line; the summary table is printed.
# Run on the device after scripts/device_round.sh build (SAILFISH_BUILD_DIR: another build).
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 NAME \"BENCH ARGS\" VARIANT=[VAR=VALUE[,VAR=VALUE...]] ..." >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/out}
bench=${SAILFISH_BUILD_DIR:-$root/build}/bench/sailfish_moe_bench
name=$1
read -r -a args <<< "$2"
shift 2
variants=()
declare -A environment
for spec in "$@"; do
  case "$spec" in
    *=*) ;;
    *) echo "$0: variant '$spec' is not NAME=[VAR=VALUE,...]" >&2; exit 2 ;;
  esac
  variant=${spec%%=*}
  variants+=("$variant")
  environment[$variant]=${spec#*=}
done
[ -x "$bench" ] || { echo "$0: no bench at $bench (run scripts/device_round.sh build)" >&2; exit 2; }
mkdir -p "$out"
log=$out/moe_${name}_probe.log
for round in $(seq 1 "${MOE_PROBE_ROUNDS:-2}"); do
  for variant in "${variants[@]}"; do
    env_args=()
    IFS=, read -r -a env_args <<< "${environment[$variant]}"
    echo "## $variant round $round"
    raw=$(env "${env_args[@]}" "$bench" "${args[@]}" 2>&1)
    rc=$?
    printf '%s\n' "$raw" | grep -E '^(\||ERROR)' | grep -v -- '---' | grep -v '^| layer'
    # A bench that stops without an ERROR line of its own (no device, its setup, an argument or
    # layer it refuses, a crash) gets one, with its last line of output.
    if [ "$rc" -ne 0 ] && ! grep -q '^ERROR' <<< "$raw"; then
      echo "ERROR the bench exited $rc (last line: $(printf '%s\n' "$raw" | grep -vE '^\|' | tail -1))"
    fi
  done
done > "$log"
# One line a (layer, proj, tokens): each variant's times over the rounds; the bench's ERROR lines
# (a row it could not plan or run, or a bench that exited nonzero) after the table, and a nonzero
# exit.
python3 - "$log" "${variants[@]}" <<'PY'
import collections, sys
times = collections.defaultdict(list)
variant = None
errors = []
for line in open(sys.argv[1]):
    if line.startswith('## '):
        variant = line.split()[1]
        continue
    if line.startswith('ERROR'):
        errors.append(f'{variant}: {line.strip()}')
        continue
    cells = [c.strip() for c in line.strip().strip('|').split('|')]
    if cells[-2].startswith('FAIL'):  # the check column, before the plan
        errors.append(f'{variant}: check failed: {line.strip()}')
    times[(cells[0], cells[1], int(cells[2]), variant)].append(float(cells[4]))
variants = sys.argv[2:]
rows = sorted({(l, p, t) for l, p, t, _ in times}, key=lambda r: (r[0], r[2], r[1]))
print('| layer | proj | tokens | ' + ' | '.join(variants) + ' |')
print('|---|---|---|' + '---|' * len(variants))
for l, p, t in rows:
    print(f'| {l} | {p} | {t} | ' + ' | '.join(
        '/'.join(f'{u:.2f}' for u in times[(l, p, t, v)]) or '-' for v in variants) + ' |')
for e in errors:
    print(e)
sys.exit(1 if errors else 0)
PY
