#!/usr/bin/env bash
# Build-time variants in interleaved rounds on a GPU host. One bench build per NAME=CUDA_FLAGS
# argument after the spec file (an empty flag string is the default build), into
# $VARIANT_BUILD_ROOT/NAME; then, VARIANT_ROUNDS times, every spec line on each of its variants in
# turn, so clocks, power and L2 state drift alike on every side.
#   scripts/device_variant_rounds.sh SPEC_FILE base= deep8=-DSAILFISH_DECODE_DEEP_STAGES=8
# SPEC_FILE lines: label|variant,variant,...|bench arguments   (# comments allowed; the first
# variant of a line is its reference). Output: $OUT/<label>_<variant>_<round>.json and .log;
# scripts/perf/variant_summary.py $OUT SPEC_FILE prints the tables. A round starts only while
# fewer than VARIANT_DEADLINE_S seconds (default: no limit) have passed since the script began, so a
# device call's time limit ends it between rounds, not in the middle of one.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
builds=${VARIANT_BUILD_ROOT:-/tmp/sailfish-variants}
spec=$1
shift
mkdir -p "$out" "$builds"
for item in "$@"; do
  name=${item%%=*} flags=${item#*=}
  b=$builds/$name
  cmake -S "$root" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAILFISH_BUILD_TESTS=OFF \
    -DSAILFISH_DEPS_DIR="$root/.deps" -DCMAKE_CUDA_FLAGS="$flags" > "$out/cmake_$name.log" 2>&1 &&
    cmake --build "$b" -j "$(nproc)" --target sailfish_bench > "$out/build_$name.log" 2>&1
  echo "variant $name ($flags): build rc=$? at ${SECONDS}s"
done
for round in $(seq 1 "${VARIANT_ROUNDS:-2}"); do
  if [ -n "${VARIANT_DEADLINE_S:-}" ] && [ "$SECONDS" -ge "$VARIANT_DEADLINE_S" ]; then
    echo "round $round not started: ${SECONDS}s past the ${VARIANT_DEADLINE_S}s deadline"
    break
  fi
  while IFS='|' read -r label variants args; do
    [[ -z "$label" || "$label" == \#* ]] && continue
    for name in ${variants//,/ }; do
      bench=$builds/$name/bench/sailfish_bench
      [ -x "$bench" ] || { echo "variant $name: no bench binary"; continue; }
      # shellcheck disable=SC2086  # args is a word list by design
      timeout 300 "$bench" $args --json "$out/${label}_${name}_$round.json" \
        > "$out/${label}_${name}_$round.log" 2>&1
      echo "$label $name round $round: rc=$? at ${SECONDS}s"
    done
  done < "$spec"
done
