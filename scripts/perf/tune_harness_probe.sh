#!/usr/bin/env bash
# Why tune() and the bench disagree on the smallest layers (docs/perf/decode.md, v43-v44: int8
# fp16 l3-8b.o at M = 1, tune() timed two splits of five stages 0.953x the rule's six, the bench
# ran them 1.19x). Each of PROBE_ROUNDS rounds runs, per row of PROBE_CASES (shape:M:bench flags,
# ',' for spaces) and per tune() setting of PROBE_VARIANTS (name=bench flags, ',' for spaces),
# one bench process with --tune --tune-recheck: every candidate timed by tune() and then again by
# the bench's own harness, in the same process. tune_harness_summary.py sets them side by side.
#   OUT=... scripts/perf/tune_harness_probe.sh [build dir]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
out=${OUT:-$root/out}/probe
mkdir -p "$out"
bench=$build/bench/sailfish_bench
cases=${PROBE_CASES:-l3-8b.o:1:--bits,8,--dtype,fp16 l3-8b.o:4:--bits,8,--dtype,fp16}
variants=${PROBE_VARIANTS:-back2back= interleaved=--tune-interleave}
rounds=${PROBE_ROUNDS:-2}
common=(--tiers auto --no-cublas --check-samples 0 --replays 15 --tune --tune-recheck)
for r in $(seq 1 "$rounds"); do
  for c in $cases; do
    IFS=: read -r shape m flags <<< "$c"
    IFS=, read -r -a extra <<< "$flags"
    for v in $variants; do
      name=${v%%=*}
      IFS=, read -r -a tune_flags <<< "${v#*=}"
      tag="${shape}_m${m}_$(tr -d ',-' <<< "$flags")_${name}_r$r"
      timeout 120 "$bench" --shapes "$shape" -m "$m" "${extra[@]}" "${common[@]}" \
        "${tune_flags[@]}" --json "$out/$tag.json" > "$out/$tag.log" 2>&1 ||
        echo "$tag: rc=$?"
    done
  done
done
python3 "$root/scripts/perf/tune_harness_summary.py" "$out"/*.json
