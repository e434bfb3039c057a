#!/usr/bin/env bash
# The MoE probes (scripts/perf/moe_probe.sh and its callers moe_self_align_probe.sh and
# moe_block_rows_probe.sh, also as device_round.sh's moe-block-rows stage) over a stand-in
# sailfish_moe_bench whose time names the variant's environment: each (layer, proj, tokens) row
# gets every variant's rounds, in order, and bad arguments are refused.
#   tests/scripts/check_moe_probes.sh SOURCE_DIR
set -euo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build/bench" "$work/out"
cat > "$work/build/bench/sailfish_moe_bench" <<'BENCH'
#!/usr/bin/env bash
# us = 10 * splits + self-align (unset 0, 0 -> 1, 1 -> 2) + 1000 * block rows (unset 0);
# down adds 100; one row a token count of --tokens (the probe's own arguments).
us=$(( ${SAILFISH_MOE_SPLITS:-0} * 10 + ${SAILFISH_MOE_SELF_ALIGN:--1} + 1 +
       ${SAILFISH_MOE_BLOCK_ROWS:-0} * 1000 ))
tokens=1
while [ $# -gt 0 ]; do
  [ "$1" = --tokens ] && tokens=$2
  shift
done
echo "streaming read: 4.6 TB/s"
if [ "${SAILFISH_MOE_BLOCK_ROWS:-}" = 99 ]; then
  echo "ERROR q gate_up tokens 1: INVALID_ARGUMENT: block_rows is 99"
  exit 1
fi
if [ "${SAILFISH_MOE_BLOCK_ROWS:-}" = 98 ]; then
  echo "no CUDA device"
  exit 2
fi
# Block rows 97: the down rows fail their output check (the bench then exits 1).
check="ok 24"
echo "| layer | proj | tokens | experts hit | us | floor us | x floor | % roof | check | plan |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for t in ${tokens//,/ }; do
  echo "| q | gate_up | $t | 8 | $((us + t)).00 | 2.00 | 1.00 | 50.0 | ok 24 | p |"
  [ "${SAILFISH_MOE_BLOCK_ROWS:-}" = 97 ] && check="FAIL 24"
  echo "| q | down | $t | 8 | $((us + t + 100)).00 | 2.00 | 1.00 | 50.0 | $check | p |"
done
[ "$check" = "ok 24" ] || exit 1
BENCH
chmod +x "$work/build/bench/sailfish_moe_bench"
probe() { OUT=$work/out SAILFISH_BUILD_DIR=$work/build bash "$root/scripts/perf/$1"; }

table=$(probe moe_self_align_probe.sh)
want='| q | down | 1 | 101.00/101.00 | 123.00/123.00 | 122.00/122.00 | 103.00/103.00 |
| q | gate_up | 1 | 1.00/1.00 | 23.00/23.00 | 22.00/22.00 | 3.00/3.00 |'
[ "$(echo "$table" | tail -2)" = "$want" ] ||
  { echo "FAIL: the self-align table is:"; echo "$table"; exit 1; }
[ "$(grep -c '^## ' "$work/out/moe_self_align_probe.log")" = 8 ] ||
  { echo "FAIL: not 2 rounds of 4 variants"; exit 1; }

table=$(probe moe_block_rows_probe.sh)
want='| layer | proj | tokens | default | b8 | b16 | b32 |
|---|---|---|---|---|---|---|
| q | down | 64 | 164.00/164.00 | 8164.00/8164.00 | 16164.00/16164.00 | 32164.00/32164.00 |
| q | gate_up | 64 | 64.00/64.00 | 8064.00/8064.00 | 16064.00/16064.00 | 32064.00/32064.00 |
| q | down | 256 | 356.00/356.00 | 8356.00/8356.00 | 16356.00/16356.00 | 32356.00/32356.00 |
| q | gate_up | 256 | 256.00/256.00 | 8256.00/8256.00 | 16256.00/16256.00 | 32256.00/32256.00 |'
[ "$table" = "$want" ] || { echo "FAIL: the block-rows table is:"; echo "$table"; exit 1; }

MOE_PROBE_ROUNDS=3 OUT=$work/out SAILFISH_BUILD_DIR=$work/build \
  bash "$root/scripts/perf/moe_probe.sh" one "--tokens 8" a= > /dev/null
[ "$(grep -c '^## a round' "$work/out/moe_one_probe.log")" = 3 ] ||
  { echo "FAIL: MOE_PROBE_ROUNDS=3 did not run three rounds"; exit 1; }
if OUT=$work/out bash "$root/scripts/perf/moe_probe.sh" bad "--tokens 1" novalue 2> "$work/err"; then
  echo "FAIL: a variant without '=' was accepted"; exit 1
fi
grep -q "is not NAME=" "$work/err" || { echo "FAIL: no reason given:"; cat "$work/err"; exit 1; }
if OUT=$work/out bash "$root/scripts/perf/moe_probe.sh" only-a-name 2> "$work/err"; then
  echo "FAIL: a probe without variants was accepted"; exit 1
fi
grep -q "^usage:" "$work/err" || { echo "FAIL: no usage line:"; cat "$work/err"; exit 1; }
# device_round.sh's moe-block-rows stage runs the same probe into its summary.
OUT=$work/round SAILFISH_BUILD_DIR=$work/build bash "$root/scripts/device_round.sh" moe-block-rows \
  > /dev/null
grep -q '^moe block-rows probe: rc=0' "$work/round/summary.txt" &&
  grep -qF '| q | gate_up | 256 | 256.00/256.00 | 8256.00/8256.00 |' "$work/round/summary.txt" ||
  { echo "FAIL: the moe-block-rows stage's summary is:"; cat "$work/round/summary.txt"; exit 1; }

# A row the bench refuses is named after the table and fails the probe.
if table=$(OUT=$work/out SAILFISH_BUILD_DIR=$work/build \
    bash "$root/scripts/perf/moe_probe.sh" err "--tokens 1" a= bad=SAILFISH_MOE_BLOCK_ROWS=99); then
  echo "FAIL: a probe whose bench failed exited 0"; exit 1
fi
grep -q '^bad: ERROR q gate_up tokens 1: INVALID_ARGUMENT' <<< "$table" ||
  { echo "FAIL: the bench's error is not in the output:"; echo "$table"; exit 1; }
grep -q '^| q | gate_up | 1 | 1.00/1.00 | - |$' <<< "$table" ||
  { echo "FAIL: the failed variant's cells are not '-':"; echo "$table"; exit 1; }
# A bench that exits nonzero without an ERROR line (no device, its setup, a refused argument, a
# crash) fails the probe too, with its last line: the table alone would read as a clean run.
if table=$(OUT=$work/out SAILFISH_BUILD_DIR=$work/build \
    bash "$root/scripts/perf/moe_probe.sh" nodev "--tokens 1" a= gone=SAILFISH_MOE_BLOCK_ROWS=98); then
  echo "FAIL: a probe whose bench exited 2 without an ERROR line exited 0"; exit 1
fi
grep -qF 'gone: ERROR the bench exited 2 (last line: no CUDA device)' <<< "$table" ||
  { echo "FAIL: the bench's exit is not in the output:"; echo "$table"; exit 1; }
grep -q '^| q | gate_up | 1 | 1.00/1.00 | - |$' <<< "$table" ||
  { echo "FAIL: the other variant's rows are gone:"; echo "$table"; exit 1; }
# A row whose output check failed fails the probe and is named, though its time is in the table.
if table=$(OUT=$work/out SAILFISH_BUILD_DIR=$work/build \
    bash "$root/scripts/perf/moe_probe.sh" wrong "--tokens 1" a= bad=SAILFISH_MOE_BLOCK_ROWS=97); then
  echo "FAIL: a probe whose bench failed a check exited 0"; exit 1
fi
grep -qF 'bad: check failed: | q | down | 1 |' <<< "$table" ||
  { echo "FAIL: the failed check is not named:"; echo "$table"; exit 1; }
if OUT=$work/round2 SAILFISH_BUILD_DIR=$work/build SAILFISH_MOE_BLOCK_ROWS=98 \
    bash "$root/scripts/device_round.sh" moe-block-rows > /dev/null; then
  echo "FAIL: device_round.sh exited 0 over a failed probe"; exit 1
fi
grep -q '^moe block-rows probe: rc=1' "$work/round2/summary.txt" ||
  { echo "FAIL: the stage hid the bench's failure:"; cat "$work/round2/summary.txt"; exit 1; }
if OUT=$work/out SAILFISH_BUILD_DIR=$work/nowhere \
    bash "$root/scripts/perf/moe_probe.sh" none "--tokens 1" a= 2> "$work/err"; then
  echo "FAIL: a probe without a bench exited 0"; exit 1
fi
grep -q "no bench at" "$work/err" || { echo "FAIL: no reason given:"; cat "$work/err"; exit 1; }
echo "ok: moe_probe.sh, moe_self_align_probe.sh, moe_block_rows_probe.sh"
