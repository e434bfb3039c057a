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

# The stage with a real device_variant_rounds.sh over a stand-in bench: the default build is the
# round's own (VARIANT_REUSE_BUILD), not built again, and the run-time variant uses it too.
mkdir -p "$work/build/bench"
cat > "$work/build/bench/sailfish_bench" <<'BENCH'
#!/usr/bin/env bash
json=${@: -1}
printf '{"rows": [{"shape": "x", "M": 1, "us": %s, "launch": "warp_split splits=%s", "status": "ok"}]}\n' \
  "${X:-2}.0" "${X:-2}" > "$json"
BENCH
chmod +x "$work/build/bench/sailfish_bench"
printf '# run: VARIANT_ROUNDS=1 scripts/device_variant_rounds.sh SPEC a= b=env:a:X=3\nl|a,b|-m 1\n' \
  > "$work/rounds_spec.txt"
OUT=$work/rounds SAILFISH_BUILD_DIR=$work/build VARIANT_BUILD_ROOT=$work/variants \
  bash "$root/scripts/device_round.sh" "spec-rounds=$work/rounds_spec.txt" > /dev/null
grep -q "variant a: the build in $work/build" "$work/rounds/spec_rounds.log" ||
  { echo "FAIL: the default build was not reused"; cat "$work/rounds/spec_rounds.log"; exit 1; }
grep -q '^| x | 1 | s2 | 2.00 | 3.00 | 1.500 |' "$work/rounds/rounds/variant_summary.md" ||
  { echo "FAIL: rounds"; cat "$work/rounds/rounds/variant_summary.md"; exit 1; }

printf 'l|a|-m 1\n' > "$work/bare.txt"
if python3 "$root/scripts/perf/spec_run.py" "$work/bare.txt" > /dev/null 2>&1; then
  echo "FAIL: a spec without a run comment gave a command"; exit 1
fi
if OUT=$work/out2 bash "$root/scripts/device_round.sh" "spec-rounds=$work/bare.txt" \
  > /dev/null 2>&1; then
  echo "FAIL: the stage ran a spec without a run comment"; exit 1
fi
echo "ok: spec run commands"
