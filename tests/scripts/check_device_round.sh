#!/usr/bin/env bash
# The device calls docs/perf/README.md prepares, dry-run on the CPU over stand-ins:
#   scripts/device_round.sh build moe / moe-block-rows moe-cublas / tests-sharded / sanitize
#   scripts/device_decode_final.sh
# The stand-in benches accept exactly the flags the real ones parse (read from
# bench/moe/moe_bench.cu and bench/options.cpp) and print their tables' columns; the stand-in
# gtest binary prints gtest 1.12's brief output, shard by shard from a stored run of the suite
# (docs/perf/data/decode_v47_gpu_tests_all.log: three shards, one failed test). Each call leaves
# at most 8 files in $OUT (what the device returns), and its summary reads its logs right:
# failures, crashes, hangs, a build that never configured, a machine without the build.
#   tests/scripts/check_device_round.sh SOURCE_DIR
set -euo pipefail
root=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build=$work/build
mkdir -p "$build/bench" "$build/tests" "$work/path"
fail() { echo "FAIL: $*"; exit 1; }

# --- the stand-ins -------------------------------------------------------------------------
# sailfish_moe_bench's flags, as its parse() reads them: NAME and whether it takes a value.
moe_flags=$(grep -oE 'arg == "--[a-z0-9-]+"( && has_value)?' "$root/bench/moe/moe_bench.cu" |
  sed -E 's/arg == "(--[a-z0-9-]+)"( && has_value)?/\1 \2/; s/ && has_value/ value/')
[ "$(echo "$moe_flags" | wc -l)" -ge 5 ] || fail "no flags read from moe_bench.cu: $moe_flags"
echo "$moe_flags" > "$work/moe_flags"
# sailfish_bench's (CLI11): add_option takes a value, add_flag none.
grep -oE 'add_(option|flag)\("[^"]+"' "$root/bench/options.cpp" |
  sed -E 's/add_option\("/value /; s/add_flag\("/flag /; s/"$//' |
  while read -r kind names; do
    for n in ${names//,/ }; do echo "$n $kind"; done
  done > "$work/bench_flags"
grep -q '^--json value$' "$work/bench_flags" || fail "no flags read from options.cpp"

cat > "$build/bench/sailfish_moe_bench" <<BENCH
#!/usr/bin/env bash
flags=$work/moe_flags
BENCH
cat >> "$build/bench/sailfish_moe_bench" <<'BENCH'
tokens=1,8,64 layers=qwen3-30b-a3b,mixtral-8x7b,deepseek-v3 bits=4 baseline=0 cublas=0
echo "$*" >> "${0%/*}/moe_bench.calls"
while [ $# -gt 0 ]; do
  kind=$(awk -v f="$1" '$1 == f {print $2 == "" ? "flag" : $2}' "$flags")
  if [ -z "$kind" ] || { [ "$kind" = value ] && [ $# -lt 2 ]; }; then
    echo "unknown or incomplete argument '$1' (see the file's header)" >&2; exit 1
  fi
  case "$1" in
    --tokens) tokens=$2 ;; --layers) layers=$2 ;; --int8) bits=8 ;;
    --baseline) baseline=1 ;; --cublas) cublas=1 ;;
  esac
  [ "$kind" = value ] && shift
  shift
done
[ "${STANDIN_MOE:-}" = nodev ] && { echo "no CUDA device"; exit 2; }
echo "streaming read: 4.608 TB/s; int$bits bf16 group 128, routing uniform"
h="| layer | proj | tokens | experts hit | us | "
[ $baseline = 1 ] && h+="align kernel us | unfused us | v1 us | v1 / us | "
h+="floor us | x floor | % roof | passes | "
[ $cublas = 1 ] && h+="cuBLAS bf16 us | x cuBLAS | "
h+="plan |"
echo "$h"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for l in ${layers//,/ }; do
  for t in ${tokens//,/ }; do
    for p in gate_up down; do
      printf '| %s | %s | %s | 8 | %s.50 | ' "$l" $p "$t" $((t + ${SAILFISH_MOE_BLOCK_ROWS:-0}))
      [ $baseline = 1 ] && printf '10.07 | 13.25 | 12.94 | 1.48 | '
      printf '2.75 | 3.18 | 32.2 | 1.00 | '
      [ $cublas = 1 ] && printf '30.00 | 3.43 | '
      echo "moe: blocks of 8 rows (average rows an expert), up to 8 blocks, 1 split |"
    done
  done
done
BENCH

cat > "$build/bench/sailfish_bench" <<BENCH
#!/usr/bin/env bash
flags=$work/bench_flags
BENCH
cat >> "$build/bench/sailfish_bench" <<'BENCH'
shapes=l3-8b.qkv,l3-8b.o,l3-8b.gate_up,l3-8b.down,l3-70b.qkv,l3-70b.o,l3-70b.gate_up,l3-70b.down
m=1 tiers=auto json= cublas=1
while [ $# -gt 0 ]; do
  kind=$(awk -v f="$1" '$1 == f {print $2}' "$flags")
  if [ -z "$kind" ] || { [ "$kind" = value ] && [ $# -lt 2 ]; }; then
    echo "The following argument was not expected: $1" >&2; exit 109
  fi
  case "$1" in
    --shapes) shapes=$2 ;; -m|--m) m=$2 ;; --tiers|--tier) tiers=$2 ;; --json) json=$2 ;;
    --no-cublas) cublas=0 ;;
  esac
  [ "$kind" = value ] && shift
  shift
done
echo "== sailfish_bench: NVIDIA H200, 132 SMs =="
printf '%-15s %5s %-14s %9s %6s %7s %6s %9s %7s %9s %7s %5s %s\n' shape M tier us TB/s \
  TFLOP/s %roof cublas_us x_cublas floor_us x_floor MHz check
for s in ${shapes//,/ }; do
  for mm in ${m//,/ }; do
    for t in ${tiers//,/ }; do
      [ "$t" = auto ] && t=auto\>decode
      if [ $cublas = 1 ]; then cu=20.00 x=1.50; else cu=- x=-; fi
      printf '%-15s %5d %-14s %9s %6s %7s %6s %9s %8s %9s %7s %5s %s\n' "${s%%=*}" "$mm" "$t" \
        13.33 3.50 1.2 76.0 "$cu" "$x" 12.00 1.11 1980 ok
    done
  done
  echo
done
[ -z "$json" ] || echo '{"rows": []}' > "$json"
BENCH

cat > "$build/tests/sailfish_gpu_tests" <<'TESTS'
#!/usr/bin/env bash
# gtest 1.12's brief output: shard i prints the i-th run of STANDIN_GTEST_LOG, or, unsharded,
# 16 passed tests; exits 1 when its run has a failed test.
for a in "$@"; do
  case "$a" in
    --gtest_brief=1) ;;
    --gtest_filter=*) echo "Note: Google Test filter = ${a#--gtest_filter=}" ;;
    *) echo "unknown flag $a"; exit 1 ;;
  esac
done
shard=${GTEST_SHARD_INDEX:-0}
# A filter that matches no test: gtest runs none and reports a pass.
if [ "${STANDIN_GTEST_NONE:-0}" = 1 ]; then
  printf '[==========] Running 0 tests from 0 test suites.\n[==========] 0 tests from 0 test suites ran. (0 ms total)\n[  PASSED  ] 0 tests.\n'
  exit 0
fi
[ "${STANDIN_CRASH_SHARD:-x}" = "$shard" ] && kill -SEGV $$
[ "${STANDIN_HANG_SHARD:-x}" = "$shard" ] && exec sleep 60
if [ -n "${STANDIN_GTEST_LOG:-}" ]; then
  run=$(awk -v want=$((shard + 1)) '/^Running main\(\)/ {n++} n == want' "$STANDIN_GTEST_LOG")
  echo "$run"
  ! grep -q '^\[  FAILED  \]' <<< "$run"
  exit
fi
printf 'Running main() from gtest_main.cc\n[==========] 16 tests from 2 test suites ran. (3575 ms total)\n[  PASSED  ] 16 tests.\n'
TESTS

# The stand-in sanitizer runs the command it wraps; the tool STANDIN_SANITIZER_FINDS names
# reports one error and exits with --error-exitcode's value, as the real one does on a finding.
cat > "$work/path/compute-sanitizer" <<'SAN'
#!/usr/bin/env bash
tool=memcheck error_rc=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) tool=$2; shift 2 ;;
    --error-exitcode) error_rc=$2; shift 2 ;;
    --print-limit) shift 2 ;;
    *) break ;;
  esac
done
"$@"; rc=$?
if [ "${STANDIN_SANITIZER_FINDS:-}" = "$tool" ]; then
  echo "========= ERROR SUMMARY: 1 error"
  exit "$error_rc"
fi
echo "========= ERROR SUMMARY: 0 errors"
exit $rc
SAN
cat > "$work/path/cmake" <<'CMAKE'
#!/usr/bin/env bash
echo "-- stand-in cmake $*"
if [ "$1" != --build ] && [ "${STANDIN_CONFIGURE_FAIL:-0}" = 1 ]; then
  echo "CMake Error at tests/CMakeLists.txt:5 (message):"
  echo "  GoogleTest sources not found at /x/.deps/googletest; run scripts/stage_deps.sh build"
  exit 1
fi
CMAKE
chmod +x "$build"/bench/* "$build"/tests/* "$work"/path/*
export PATH=$work/path:$PATH SAILFISH_BUILD_DIR=$build SAILFISH_GIT_REVISION=test

# What the device returns: at most 8 files, none over 16 MiB, at most two folders down.
returned() {
  local n
  n=$(find "$1" -type f | wc -l)
  [ "$n" -le 8 ] || fail "$2 left $n files in \$OUT (the device returns 8): $(ls -R "$1")"
  [ -z "$(find "$1" -type f -size +16M)" ] || fail "$2 left a file over 16 MiB"
  [ -z "$(find "$1" -mindepth 3 -type f)" ] || fail "$2 left files three folders down"
}
round() { local o=$work/$1; shift; OUT=$o bash "$root/scripts/device_round.sh" "$@" > "$o.stdout" 2>&1; }

# --- call 1: build moe -----------------------------------------------------------------------
round c1 build moe || fail "build moe exited $?: $(cat "$work/c1.stdout")"
returned "$work/c1" "build moe"
for line in '^build: rc=0$' '^moe tests: rc=0 \[  PASSED  \] 16 tests' \
  '^moe memcheck: rc=0 ========= ERROR SUMMARY: 0 errors' '^moe bench int4: rc=0$' \
  '^moe bench int8: rc=0$' '^| mixtral-8x7b | down | 64 | 8 | 64.50 | 10.07 '; do
  grep -qE "$line" "$work/c1/summary.txt" || fail "build moe: no '$line' in: $(cat "$work/c1/summary.txt")"
done
! grep -q 'unknown or incomplete' "$work"/c1/*.log || fail "the moe stage passed a flag the bench refuses"
# A configure that fails (no .deps carried) shows its reason, not a missing build.log.
if STANDIN_CONFIGURE_FAIL=1 round c1f build moe; then fail "a failed configure exited 0"; fi
grep -q '^build: rc=1 (cmake.log)' "$work/c1f/summary.txt" &&
  grep -q 'GoogleTest sources not found' "$work/c1f.stdout" ||
  fail "the configure's failure is not shown: $(cat "$work/c1f.stdout")"

# --- call 2: moe-block-rows moe-cublas ----------------------------------------------------------
round c2 moe-block-rows moe-cublas || fail "moe-block-rows moe-cublas exited $?"
returned "$work/c2" "moe-block-rows moe-cublas"
grep -q '^moe block-rows probe: rc=0$' "$work/c2/summary.txt" &&
  grep -qF '| mixtral-8x7b | gate_up | 64 | 64.50/64.50 | 72.50/72.50 | 80.50/80.50 | 96.50/96.50 |' \
    "$work/c2/summary.txt" &&
  grep -q '^moe bench beside cuBLAS: rc=0$' "$work/c2/summary.txt" &&
  grep -qF '| cuBLAS bf16 us | x cuBLAS | plan |' "$work/c2/summary.txt" &&
  grep -qF '| deepseek-v3 | down | 256 |' "$work/c2/summary.txt" ||
  fail "moe-block-rows moe-cublas: $(cat "$work/c2/summary.txt")"
if STANDIN_MOE=nodev round c2f moe-block-rows moe-cublas; then fail "a failed call exited 0"; fi
grep -q '^moe block-rows probe: rc=1$' "$work/c2f/summary.txt" &&
  grep -q '^moe bench beside cuBLAS: rc=2$' "$work/c2f/summary.txt" ||
  fail "a bench without a device passed: $(cat "$work/c2f/summary.txt")"

# --- call 3: tests-sharded ---------------------------------------------------------------------
export STANDIN_GTEST_LOG=$root/docs/perf/data/decode_v47_gpu_tests_all.log
if GPU_TEST_SHARDS=3 round c3 tests-sharded; then fail "tests-sharded with a failed test exited 0"; fi
returned "$work/c3" "tests-sharded"
want='gpu tests (3 shards): rc=1 passed=982 failed=1 skipped=0 shards finished=3 of 3 (rc: 0 1 0)'
[ "$(head -1 "$work/c3/summary.txt")" = "$want" ] ||
  fail "tests-sharded's summary is: $(cat "$work/c3/summary.txt")"
grep -qF '[  FAILED  ] DecodeSpread.TwoTokenTilesTakeSpreadPairsOverTheReduceKernel' \
  "$work/c3/summary.txt" || fail "the failed test is not named: $(cat "$work/c3/summary.txt")"
[ "$(grep -c '^## shard' "$work/c3/gpu_tests.log")" = 3 ] || fail "the shards' logs are not all kept"
GPU_TEST_SHARDS=3 STANDIN_CRASH_SHARD=0 round c3c tests-sharded || true
grep -qF 'rc=1 passed=654 failed=1 skipped=0 shards finished=2 of 3 (rc: 139 1 0)' \
  "$work/c3c/summary.txt" || fail "a crashed shard: $(cat "$work/c3c/summary.txt")"
GPU_TEST_SHARDS=3 STANDIN_HANG_SHARD=2 GPU_TEST_TIMEOUT=2 round c3h tests-sharded || true
grep -qF 'shards finished=2 of 3 (rc: 0 1 124)' "$work/c3h/summary.txt" ||
  fail "a hung shard: $(cat "$work/c3h/summary.txt")"
unset STANDIN_GTEST_LOG
# A clean suite exits 0 (the stage's last command, a grep for failures, finds none).
round c3ok tests-sharded || fail "a clean tests-sharded exited $?: $(cat "$work/c3ok.stdout")"
grep -q '^gpu tests (4 shards): rc=0 passed=64 failed=0 skipped=0 shards finished=4 of 4' \
  "$work/c3ok/summary.txt" || fail "a clean tests-sharded: $(cat "$work/c3ok/summary.txt")"

# A machine given back between calls has no build: each stage says so.
if SAILFISH_BUILD_DIR=$work/nowhere round c0 moe moe-cublas tests-sharded; then
  fail "stages without a build exited 0"
fi
[ "$(grep -c 'no .* (run the build stage first)' "$work/c0/summary.txt")" = 3 ] ||
  fail "stages without a build: $(cat "$work/c0/summary.txt")"

# More than 8 files (build moe moe-block-rows moe-cublas leaves 10) go into one archive, all
# but the summary.
round c12 build moe moe-block-rows moe-cublas || fail "build moe moe-block-rows moe-cublas exited $?"
returned "$work/c12" "build moe moe-block-rows moe-cublas"
tar -tzf "$work/c12/round_files.tar.gz" > "$work/c12.list"
grep -q '^packed 9 files into round_files.tar.gz' "$work/c12/summary.txt" &&
  grep -qx moe_bench_cublas.log "$work/c12.list" ||
  fail "the files were not packed: $(ls "$work/c12")"

# --- call 3s: sanitize ---------------------------------------------------------------------------
# racecheck, synccheck and initcheck on four groups (racecheck skips prefill, saying so): 11 logs
# and the summary, packed to what the device returns.
round c3s sanitize || fail "sanitize exited $?: $(cat "$work/c3s.stdout")"
returned "$work/c3s" "sanitize"
[ "$(grep -cE '^sanitize [a-z]+ [a-z-]+: rc=0 ========= ERROR SUMMARY: 0 errors \[  PASSED  \] 16 tests' \
  "$work/c3s/summary.txt")" = 11 ] &&
  grep -q '^sanitize racecheck prefill: skipped' "$work/c3s/summary.txt" ||
  fail "sanitize: $(cat "$work/c3s/summary.txt")"
# Read tar's output whole before grepping it: under pipefail, `tar | grep -q` fails whenever grep
# quits at its match before tar has written the rest (SIGPIPE: tar exits 141), which failed CI
# once and here 278 of 500 tries on a 12-file archive.
packed=$(tar -tzf "$work/c3s/round_files.tar.gz")
grep -qx sanitize_initcheck_decode-b.log <<< "$packed" ||
  fail "sanitize's logs were not packed: $(ls "$work/c3s"); the archive holds: $packed"
moe_log=$(tar -xzOf "$work/c3s/round_files.tar.gz" sanitize_racecheck_moe.log)
grep -qF 'Note: Google Test filter = MoeAlignGpu.*:' <<< "$moe_log" ||
  fail "the moe group's filter was not passed"
# A finding (the tool's exit code 9), an unknown group and a group's own filter.
if STANDIN_SANITIZER_FINDS=synccheck SANITIZE_GROUPS=moe round c3f sanitize; then
  fail "sanitize with a finding exited 0"
fi
grep -q '^sanitize synccheck moe: rc=9 ========= ERROR SUMMARY: 1 error' "$work/c3f/summary.txt" &&
  grep -q '^sanitize initcheck moe: rc=0 ' "$work/c3f/summary.txt" ||
  fail "a finding: $(cat "$work/c3f/summary.txt")"
if STANDIN_GTEST_NONE=1 SANITIZE_TOOLS=initcheck SANITIZE_GROUPS=moe round c3z sanitize; then
  fail "sanitize over a filter that ran no test exited 0"
fi
grep -q '^sanitize initcheck moe: rc=1 ' "$work/c3z/summary.txt" ||
  fail "a filter that ran no test: $(cat "$work/c3z/summary.txt")"
if SANITIZE_GROUPS=decode round c3u sanitize; then fail "sanitize of an unknown group exited 0"; fi
grep -q '^sanitize: unknown group decode (decode-a decode-b prefill moe)' "$work/c3u/summary.txt" ||
  fail "an unknown group: $(cat "$work/c3u/summary.txt")"
SANITIZE_TOOLS=initcheck SANITIZE_GROUPS=decode-b SANITIZE_FILTER='DecodeWideWarps.*' \
  round c3o sanitize || fail "sanitize with a filter exited $?"
[ "$(grep -c '^sanitize ' "$work/c3o/summary.txt")" = 1 ] &&
  grep -qxF 'Note: Google Test filter = DecodeWideWarps.*' "$work/c3o/sanitize_initcheck_decode-b.log" ||
  fail "one tool and group, its own filter: $(cat "$work/c3o/summary.txt")"

# --- call 4: device_decode_final.sh -------------------------------------------------------------
OUT=$work/c4 bash "$root/scripts/device_decode_final.sh" > "$work/c4.stdout" 2>&1 ||
  fail "device_decode_final.sh exited $?: $(cat "$work/c4.stdout")"
returned "$work/c4" "device_decode_final.sh"
[ "$(ls "$work"/c4/*.json | wc -l)" = 5 ] || fail "not five JSON files: $(ls "$work/c4")"
[ "$(grep -c ': rc=0$' "$work/c4/decode_final_summary.txt")" = 5 ] &&
  grep -q '^l3-8b.o 64 auto>decode 13.33 1.50 1980$' "$work/c4/decode_final_summary.txt" &&
  grep -q '^l3-70b.down 16 decode 13.33 1.50 1980$' "$work/c4/decode_final_summary.txt" &&
  grep -q '^router-8192x256 1 auto>decode 13.33 1.50 1980$' "$work/c4/decode_final_summary.txt" ||
  fail "device_decode_final.sh's table: $(cat "$work/c4.stdout")"
[ "$(grep -c '^## .*: rc=0$' "$work/c4/decode_final.log")" = 5 ] || fail "the five logs are not kept"
if OUT=$work/c4n SAILFISH_BUILD_DIR=$work/nowhere bash "$root/scripts/device_decode_final.sh" \
  > "$work/c4n.stdout" 2>&1; then
  fail "device_decode_final.sh without a build exited 0"
fi
grep -q '^no bench at' "$work/c4n.stdout" || fail "no reason given: $(cat "$work/c4n.stdout")"
# After the build stage in the same call (9 files): all but the two summaries packed.
round c5 build || fail "build exited $?"
OUT=$work/c5 bash "$root/scripts/device_decode_final.sh" > "$work/c5.stdout" 2>&1 ||
  fail "device_decode_final.sh after the build exited $?: $(cat "$work/c5.stdout")"
returned "$work/c5" "build, then device_decode_final.sh"
tar -tzf "$work/c5/decode_final_files.tar.gz" > "$work/c5.list"
grep -qx auto_m1_64.json "$work/c5.list" && grep -qx build.log "$work/c5.list" &&
  [ -f "$work/c5/summary.txt" ] && [ -f "$work/c5/decode_final_summary.txt" ] ||
  fail "build, then device_decode_final.sh: $(ls "$work/c5"; cat "$work/c5.list")"
mkdir -p "$work/nodev/bench"
printf '#!/usr/bin/env bash\necho "no CUDA device"\nexit 2\n' > "$work/nodev/bench/sailfish_bench"
chmod +x "$work/nodev/bench/sailfish_bench"
if OUT=$work/c4d SAILFISH_BUILD_DIR=$work/nodev bash "$root/scripts/device_decode_final.sh" \
  > "$work/c4d.stdout" 2>&1; then
  fail "device_decode_final.sh exited 0 with every run failing"
fi
[ "$(grep -c ': rc=2$' "$work/c4d/decode_final_summary.txt")" = 5 ] ||
  fail "the failed runs: $(cat "$work/c4d.stdout")"
echo "ok: device_round.sh (build moe, moe-block-rows moe-cublas, tests-sharded, sanitize)," \
  "device_decode_final.sh"
