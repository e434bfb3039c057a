#!/usr/bin/env bash
# device_round.sh's sanitize stage names the GPU tests it runs by gtest filters. A test renamed or
# removed would leave a pattern matching nothing, and the sanitizer would pass over a test it never
# ran. Every pattern of every group must match at least one test of the built GPU suite (listing
# needs no GPU).
#   tests/scripts/check_sanitize_filters.sh SOURCE_DIR SAILFISH_GPU_TESTS
set -euo pipefail
root=$1 tests=$2
mapfile -t groups < <(sed -nE "s/^ *\[([a-z-]+)\]='([^']+)'$/\1 \2/p" "$root/scripts/device_round.sh")
[ "${#groups[@]}" -ge 4 ] || { echo "FAIL: found ${#groups[@]} sanitize groups"; exit 1; }
count() { "$tests" --gtest_list_tests --gtest_filter="$1" | grep -c '^  ' || true; }
for entry in "${groups[@]}"; do
  group=${entry%% *} filter=${entry#* }
  IFS=: read -ra patterns <<< "$filter"
  for pattern in "${patterns[@]}"; do
    n=$(count "$pattern")
    [ "$n" -gt 0 ] || { echo "FAIL: sanitize group $group: '$pattern' matches no GPU test"; exit 1; }
  done
  echo "sanitize group $group: $(count "$filter") tests"
done
