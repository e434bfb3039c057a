#!/usr/bin/env bash
# scripts/perf/spec_run.py and device_round.sh's spec-rounds=FILE stage: the v52 probe spec's
# command (SPEC replaced, continuations joined), a made-up spec whose command only echoes run by
# the stage into $OUT/spec_rounds.log, and a spec without a run comment refused by both.
#   tests/scripts/check_spec_run.sh SOURCE_DIR
set -euo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
spec=$root/docs/perf/data/decode_v52_depth_probe_spec.txt
command=$(python3 "$root/scripts/perf/spec_run.py" "$spec")
want="VARIANT_ROUNDS=1 VARIANT_DEADLINE_S=500 scripts/device_variant_rounds.sh $spec auto= "
want+="f2=env:auto:SAILFISH_DECODE_SPLITS=2 "
[[ "$command" == "$want"* ]] || { echo "FAIL: command is: $command"; exit 1; }
[[ "$command" == *" f8=env:auto:SAILFISH_DECODE_SPLITS=8" ]] ||
  { echo "FAIL: the last continuation is missing: $command"; exit 1; }

printf '# run: VARIANT_ROUNDS=1 echo rounds of SPEC \\\n#   a= b=env:a:X=1\nl|a,b|-m 1\n' \
  > "$work/spec.txt"
OUT=$work/out bash "$root/scripts/device_round.sh" "spec-rounds=$work/spec.txt" > /dev/null
[ "$(cat "$work/out/spec_rounds.log")" = "rounds of $work/spec.txt a= b=env:a:X=1" ] ||
  { echo "FAIL: the stage ran: $(cat "$work/out/spec_rounds.log")"; exit 1; }

printf 'l|a|-m 1\n' > "$work/bare.txt"
if python3 "$root/scripts/perf/spec_run.py" "$work/bare.txt" > /dev/null 2>&1; then
  echo "FAIL: a spec without a run comment gave a command"; exit 1
fi
if OUT=$work/out2 bash "$root/scripts/device_round.sh" "spec-rounds=$work/bare.txt" \
  > /dev/null 2>&1; then
  echo "FAIL: the stage ran a spec without a run comment"; exit 1
fi
echo "ok: spec run commands"
