#!/usr/bin/env bash
# A/B of the working tree against an older tree on a GPU host: builds the old tree's bench (in
# the background, while the caller builds the new tree), then runs each bench set on old and new
# alternately, AB_ROUNDS times, into $OUT/ab_<label>_<old|new>_<round>.json.
#   scripts/device_ab.sh build-old           # start the old build (AB_OLD_TREE, default old_tree)
#   scripts/device_ab.sh run SPEC_FILE       # after build-old and the new build have finished
# SPEC_FILE lines: label|ENV=value ...|bench arguments   (# comments allowed)
# The old tree is an untracked `git archive <rev> | tar -x -C old_tree` copy (docs/perf/README.md).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
old_tree=${AB_OLD_TREE:-$root/old_tree}
old_build=${AB_OLD_BUILD:-/tmp/sailfish-ab-old}
new_build=${SAILFISH_BUILD_DIR:-$root/build}
mkdir -p "$out"
case "${1:-}" in
  build-old)
    cmake -S "$old_tree" -B "$old_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DSAILFISH_BUILD_TESTS=OFF -DSAILFISH_DEPS_DIR="$root/.deps" > "$out/ab_old_cmake.log" 2>&1 &&
      cmake --build "$old_build" -j "$(nproc)" --target sailfish_bench > "$out/ab_old_build.log" 2>&1
    echo "ab old build: rc=$?" ;;
  run)
    for round in $(seq 1 "${AB_ROUNDS:-2}"); do
      while IFS='|' read -r label envs args; do
        [[ -z "$label" || "$label" == \#* ]] && continue
        for side in old new; do
          b=$old_build
          [ "$side" = new ] && b=$new_build
          # shellcheck disable=SC2086  # envs and args are word lists by design
          env $envs timeout 200 "$b/bench/sailfish_bench" $args \
            --json "$out/ab_${label}_${side}_$round.json" > "$out/ab_${label}_${side}_$round.log" 2>&1
          echo "ab $label $side round $round: rc=$?"
        done
      done < "$2"
    done ;;
  *) echo "usage: $0 build-old | run SPEC_FILE" >&2; exit 2 ;;
esac
