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
# VARIANT_REUSE_BUILD=DIR: the default build (an empty flag string) is DIR's, not built again.
# A run-time variant reuses another's build with environment settings, NAME=env:BUILD:VAR=VALUE,...
#   scripts/device_variant_rounds.sh SPEC_FILE base= w5=env:base:SAILFISH_DECODE_WARP_STAGES=5
# The device returns only a few files from $OUT, so at the end the tables (with every variant's
# launch strings) go to $OUT/variant_summary.md and stdout, and the rounds' JSON and logs into
# $OUT/variant_rounds.tar.xz, which variant_summary.py reads as it is (VARIANT_PACK=0: leave them).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
builds=${VARIANT_BUILD_ROOT:-/tmp/sailfish-variants}
spec=$1
shift
mkdir -p "$out" "$builds"
declare -A build_of env_of
for item in "$@"; do
  name=${item%%=*} flags=${item#*=}
  build_of[$name]=$name env_of[$name]=
  if [[ "$flags" == env:* ]]; then
    rest=${flags#env:}
    build_of[$name]=${rest%%:*} env_of[$name]=${rest#*:}
    env_of[$name]=${env_of[$name]//,/ }
    echo "variant $name: the ${build_of[$name]} build with ${env_of[$name]}"
    continue
  fi
  b=$builds/$name
  if [ -z "$flags" ] && [ -n "${VARIANT_REUSE_BUILD:-}" ]; then
    # The default build already made (device_round.sh's): the same sources and flags.
    [ -x "$VARIANT_REUSE_BUILD/bench/sailfish_bench" ] ||
      { echo "variant $name: no bench in VARIANT_REUSE_BUILD=$VARIANT_REUSE_BUILD"; exit 1; }
    mkdir -p "$b/bench" && ln -sf "$VARIANT_REUSE_BUILD/bench/sailfish_bench" "$b/bench/"
    echo "variant $name: the build in $VARIANT_REUSE_BUILD"
    continue
  fi
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
      bench=$builds/${build_of[$name]:-$name}/bench/sailfish_bench
      [ -x "$bench" ] || { echo "variant $name: no bench binary"; continue; }
      # shellcheck disable=SC2086  # args and the variant's settings are word lists by design
      timeout 300 env ${env_of[$name]:-} "$bench" $args --json "$out/${label}_${name}_$round.json" \
        > "$out/${label}_${name}_$round.log" 2>&1
      echo "$label $name round $round: rc=$? at ${SECONDS}s"
    done
  done < "$spec"
done
if [ "${VARIANT_PACK:-1}" != 0 ]; then
  "$root/scripts/perf/pack_variant_rounds.sh" "$out" "$spec"
fi
