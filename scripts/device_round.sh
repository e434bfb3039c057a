#!/usr/bin/env bash
# One round on a GPU host (the device tool): build, test, benchmark, in as few minutes as possible.
# Logs and JSON go to $OUT (or out/); the last lines printed are a short summary.
#   scripts/device_round.sh build tests dequant decode-sweep dense-large bench-default
# (tests-sharded: the whole GPU suite in four processes at once, the faster form of tests;
# spec-rounds=FILE: a variant spec's rounds, as its "# run:" comment says; moe: the MoE tests,
# memcheck on them, and sailfish_moe_bench; moe-cublas: that bench beside cuBLAS; moe-block-rows:
# scripts/perf/moe_block_rows_probe.sh; sanitize: racecheck, synccheck and initcheck on the
# small-shape tests of every kernel family.) Exit status 0 where every stage's rc was 0, else 1
# (2: an unknown stage or spec); a failed build stops the round.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
build=${SAILFISH_BUILD_DIR:-$root/build}  # a variant build (device_build_variants.sh) for profiles
mkdir -p "$out"
summary=$out/summary.txt
: > "$summary"
# The device copy's git metadata can lag the tree it runs: the bench's git_revision gets the
# sources' content hash as well (scripts/source_hash.sh says how to match it to a commit).
if [ -z "${SAILFISH_GIT_REVISION:-}" ]; then
  revision=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  export SAILFISH_GIT_REVISION="$revision+sources-$(bash "$root/scripts/source_hash.sh" "$root")"
fi
# A GPU test that finds no device fails here instead of skipping (tests/gpu/gpu_test_helpers.h).
export SAILFISH_REQUIRE_GPU=1
# The exit status: 1 where a stage noted a nonzero rc (or could not run), else 0; the last
# command's status would be a grep's, 1 on a clean run.
status=0
note() {
  echo "$*" | tee -a "$summary"
  [[ "$*" =~ rc=[1-9] ]] && status=1
  return 0
}
# The device returns at most 8 files from $OUT: where the stages left more (build moe
# moe-block-rows leaves 9), every file but the summary goes into round_files.tar.gz on the way
# out (scripts/pack_out.sh), so none is dropped.
pack_out() { bash "$root/scripts/pack_out.sh" "$out" round_files.tar.gz summary.txt | tee -a "$summary"; }
trap pack_out EXIT
bench() { "$build/bench/sailfish_bench" "$@"; }
# A stage's binary, or a note saying why the stage is skipped: a machine given back between calls
# (30 s after one) loses the build, so each call that needs it should begin with the build stage.
built() {
  [ -x "$1" ] && return 0
  note "$stage: no ${1#"$build"/} in $build (run the build stage first)"
  status=1
  return 1
}
# Bench arguments for a profiled run: one launch of one row, no baseline, no check.
one_launch=(--no-cublas --replays 1 --warmup 0 --graph-launches 1 --check-samples 0)
# Nsight Compute arguments for per-instruction stall samples as CSV.
sass_samples=(--section SourceCounters --section WarpStateStats --page source --print-source sass --csv)

for stage in "$@"; do
  case "$stage" in
    build)
      # A configure that fails (.deps not carried, say) writes no build.log: its own log is shown.
      log=$out/cmake.log
      cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DSAILFISH_DEPS_DIR="$root/.deps" > "$log" 2>&1 &&
        { log=$out/build.log; cmake --build "$build" -j "$(nproc)" > "$log" 2>&1; }
      rc=$?
      if [ $rc -ne 0 ]; then
        note "build: rc=$rc (${log##*/})"
        tail -40 "$log" | tee -a "$summary"
        exit 1
      fi
      note "build: rc=0" ;;
    tests)
      "$build/tests/sailfish_gpu_tests" --gtest_brief=1 > "$out/gpu_tests.log" 2>&1
      note "gpu tests: rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/gpu_tests.log" | head -3 | tr '\n' ' ')"
      grep -E "Failure" -A3 "$out/gpu_tests.log" | head -30 ;;
    tests-sharded)
      built "$build/tests/sailfish_gpu_tests" || continue
      # The whole suite in GPU_TEST_SHARDS processes at once (default 4; gtest's sharding), one
      # log, counts summed over the shards: how the last stops ran it, ~250 s on the H200.
      # Each shard runs under GPU_TEST_TIMEOUT seconds (default 420), so a hang still leaves this
      # summary inside the device's 600 s call.
      shards=${GPU_TEST_SHARDS:-4}
      pids=()
      for i in $(seq 0 $((shards - 1))); do
        GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 10 "${GPU_TEST_TIMEOUT:-420}" \
          "$build/tests/sailfish_gpu_tests" --gtest_brief=1 > "$out/gpu_tests_shard$i.log" 2>&1 &
        pids+=($!)
      done
      rc=0 codes=
      for i in "${!pids[@]}"; do
        wait "${pids[$i]}"
        code=$?
        codes+=" $code"
        [ "$code" -eq 0 ] || rc=1
        { echo "## shard $i of $shards: rc=$code"; cat "$out/gpu_tests_shard$i.log"; } \
          >> "$out/gpu_tests.log.tmp"
      done
      mv "$out/gpu_tests.log.tmp" "$out/gpu_tests.log" && rm -f "$out"/gpu_tests_shard*.log
      # gtest's brief output (1.12) sums only the passed and skipped tests ("[  PASSED  ] 250
      # tests."); it names each failed test on a line of its own ("[  FAILED  ] Suite.Name (3
      # ms)"), counted here by name. A shard without its "[==========] N tests ... ran." line
      # died (a crash, the timeout): its tests are in none of the counts.
      count() { grep -E "^\[  $1 *\] [0-9]+ test" "$out/gpu_tests.log" | awk '{s += $4} END {print s + 0}'; }
      failed=$(grep -E '^\[  FAILED  \] [A-Za-z_]' "$out/gpu_tests.log" | sed -E 's/ \(.*//; s/, where .*//' |
        sort -u | wc -l)
      finished=$(grep -cE '^\[==========\] [0-9]+ tests? from .* ran' "$out/gpu_tests.log")
      note "gpu tests ($shards shards): rc=$rc passed=$(count PASSED) failed=$failed" \
        "skipped=$(count SKIPPED) shards finished=$finished of $shards (rc:$codes)"
      grep -E '^\[  FAILED  \] [A-Za-z_]' "$out/gpu_tests.log" | head -20 | tee -a "$summary"
      grep -E "Failure" -A3 "$out/gpu_tests.log" | head -30 ;;
    prefill-tests)
      # The prefill suite alone, first: a pipeline bug shows up as a hang, so it runs under a limit.
      timeout 300 "$build/tests/sailfish_gpu_tests" --gtest_brief=1 \
        --gtest_filter='*Prefill*:DecodeDispatch*:MatMulNBitsOp.EveryAcceptedTier' \
        > "$out/prefill_tests.log" 2>&1
      note "prefill tests: rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/prefill_tests.log" | head -3 | tr '\n' ' ')"
      grep -E "Failure" -A3 "$out/prefill_tests.log" | head -30 ;;
    prefill-bench)
      # The prefill tier against dense and cuBLAS at prefill sizes, int4 then int8.
      timeout 400 "$build/bench/sailfish_bench" --tiers prefill,dense -m 128,256,512,1024,2048,4096,8192 \
        --json "$out/prefill.json" > "$out/prefill.log" 2>&1
      note "prefill bench: rc=$?"
      timeout 200 "$build/bench/sailfish_bench" --tiers prefill --bits 8 -m 1024,4096 \
        --json "$out/prefill_int8.json" > "$out/prefill_int8.log" 2>&1
      note "prefill int8 bench: rc=$?" ;;
    prefill-widths)
      # Every prefill token width forced (SAILFISH_PREFILL_TOKENS) at WIDTHS_M, the decode tier and
      # cuBLAS alongside; then a table of time per width and the step time each implies.
      widths_m=${WIDTHS_M:-16,32,48,64}
      timeout 200 "$build/bench/sailfish_bench" --tiers decode -m "$widths_m" \
        --json "$out/widths_decode.json" > "$out/widths_decode.log" 2>&1
      note "widths: decode rc=$?"
      for t in ${WIDTHS:-16 32 64 128}; do
        SAILFISH_PREFILL_TOKENS=$t timeout 200 "$build/bench/sailfish_bench" --tiers prefill \
          -m "$widths_m" --no-cublas --json "$out/widths_t$t.json" > "$out/widths_t$t.log" 2>&1
        note "widths: prefill tokens=$t rc=$?"
      done
      python3 "$root/scripts/perf/widths_table.py" "$out"/widths_decode.json "$out"/widths_t*.json \
        | tee -a "$summary" ;;
    prefill-profile)
      # Nsight Compute on prefill launches (PREFILL_PROFILE_CASES: shape:M items; the environment,
      # e.g. SAILFISH_PREFILL_TOKENS, passes through): pipe use and stall reasons.
      for case in ${PREFILL_PROFILE_CASES:-l3-8b.qkv:128 l3-8b.o:4096}; do
        shape=${case%%:*} m=${case##*:}
        timeout 240 ncu --kernel-name regex:prefill_kernel --launch-count 1 \
          --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
          --section SchedulerStats --section MemoryWorkloadAnalysis --section SourceCounters \
          --section LaunchStats --section Occupancy \
          "$build/bench/sailfish_bench" --shapes "$shape" -m "$m" --tiers prefill \
          "${one_launch[@]}" \
          > "$out/ncu_${shape}_$m.log" 2>&1
        note "ncu $shape M=$m: rc=$?"
      done ;;
    prefill-sass)
      # Per-instruction stall samples (SASS) of prefill launches (PREFILL_SASS_CASES: shape:M items),
      # as CSV, and the stall summary.
      for case in ${PREFILL_SASS_CASES:-l3-8b.qkv:128 l3-8b.o:4096}; do
        shape=${case%%:*} m=${case##*:}
        timeout 240 ncu --kernel-name regex:prefill_kernel --launch-count 1 \
          "${sass_samples[@]}" \
          "$build/bench/sailfish_bench" --shapes "$shape" -m "$m" --tiers prefill \
          "${one_launch[@]}" \
          > "$out/sass_${shape}_$m.csv" 2>&1
        note "ncu sass $shape M=$m: rc=$?"
      done ;;
    decode-profile)
      # Nsight Compute on decode launches (DECODE_PROFILE_CASES: shape:M items): speed of light,
      # memory, scheduler, stall reasons; then per-instruction stall samples (SASS, CSV) of the first.
      cases=${DECODE_PROFILE_CASES:-"l3-70b.down:1 l3-8b.o:1 l3-70b.gate_up:16"}
      for case in $cases; do
        shape=${case%%:*} m=${case##*:}
        timeout 240 ncu --kernel-name regex:decode --launch-count 1 \
          --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
          --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
          --section ComputeWorkloadAnalysis --section InstructionStats \
          --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
          "$build/bench/sailfish_bench" --shapes "$shape" -m "$m" --tiers decode \
          "${one_launch[@]}" \
          > "$out/ncu_decode_${shape}_$m.log" 2>&1
        note "ncu decode $shape M=$m: rc=$?"
      done
      first=${cases%% *}; shape=${first%%:*} m=${first##*:}
      timeout 240 ncu --kernel-name regex:decode --launch-count 1 \
        "${sass_samples[@]}" \
        "$build/bench/sailfish_bench" --shapes "$shape" -m "$m" --tiers decode \
        "${one_launch[@]}" \
        > "$out/sass_decode_${shape}_$m.csv" 2>&1
      note "ncu sass decode $shape M=$m: rc=$?" ;;
    decode-tests)
      timeout 300 "$build/tests/sailfish_gpu_tests" --gtest_brief=1 \
        --gtest_filter='*Decode*:MatMulNBitsOp.*:*Dispatch*:*Options*:Tune.*' \
        > "$out/decode_tests.log" 2>&1
      note "decode tests: rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/decode_tests.log" | head -3 | tr '\n' ' ')"
      grep -E "Failure" -A6 "$out/decode_tests.log" | head -40 ;;
    mid-m)
      # M = 32 and 64: the decode tier (warp-split and strip kernels) against the prefill tier.
      timeout 200 "$build/bench/sailfish_bench" --tiers decode,prefill -m ${MID_M:-32,64} --no-cublas \
        --json "$out/mid_m.json" > "$out/mid_m.log" 2>&1
      note "mid-m bench: rc=$?"
      SAILFISH_DECODE_WARP_SPLIT=0 timeout 200 "$build/bench/sailfish_bench" --tiers decode \
        -m 32 --no-cublas --json "$out/mid_m_strip.json" > "$out/mid_m_strip.log" 2>&1
      note "mid-m strip bench: rc=$?" ;;
    decode-int8)
      timeout 200 "$build/bench/sailfish_bench" --tiers decode -m 1,16 --bits 8 --no-cublas \
        --json "$out/decode_int8.json" > "$out/decode_int8.log" 2>&1
      note "decode int8 bench: rc=$?" ;;
    decode-split-sweep)
      # Forced split depths (DECODE_SWEEP_SPLITS) at M = 1 and 16 (DECODE_SWEEP_M) on the default
      # shapes, with the default epilogue for the depth and then with the reduce kernel (no
      # clusters), beside the heuristic's choice; the table (scripts/perf/split_table.py) goes to
      # the summary.
      sweep_args=(--tiers decode -m "${DECODE_SWEEP_M:-1,16}" --no-cublas)
      "$build/bench/sailfish_bench" "${sweep_args[@]}" --json "$out/split_auto.json" \
        > "$out/split_auto.log" 2>&1
      for s in ${DECODE_SWEEP_SPLITS:-1 2 3 4 6 8}; do
        SAILFISH_DECODE_SPLITS=$s timeout 200 "$build/bench/sailfish_bench" "${sweep_args[@]}" \
          --json "$out/split_s$s.json" > "$out/split_s$s.log" 2>&1
        [ "$s" -gt 1 ] && SAILFISH_DECODE_SPLITS=$s SAILFISH_DECODE_CLUSTER_REDUCE=0 timeout 200 \
          "$build/bench/sailfish_bench" "${sweep_args[@]}" --json "$out/split_s${s}_e2.json" \
          > "$out/split_s${s}_e2.log" 2>&1
        note "split sweep s=$s: done"
      done
      python3 "$root/scripts/perf/split_table.py" "$out/split_auto.json" "$out"/split_s*.json \
        | tee -a "$summary" ;;
    decode-cluster)
      # The split epilogues at M = 1 and 16 (DECODE_CLUSTER_M): the cluster reduce (default, with
      # cuBLAS and the floor) against the reduce kernel, int4 then int8; the table goes to the
      # summary.
      for bits in 4 8; do
        timeout 200 "$build/bench/sailfish_bench" --tiers decode -m ${DECODE_CLUSTER_M:-1,16} \
          --bits $bits --json "$out/cluster_int$bits.json" > "$out/cluster_int$bits.log" 2>&1
        note "decode cluster int$bits: rc=$?"
        SAILFISH_DECODE_CLUSTER_REDUCE=0 timeout 200 "$build/bench/sailfish_bench" --tiers decode \
          -m ${DECODE_CLUSTER_M:-1,16} --bits $bits --no-cublas \
          --json "$out/reduce_int$bits.json" > "$out/reduce_int$bits.log" 2>&1
        note "decode reduce kernel int$bits: rc=$?"
        python3 "$root/scripts/perf/compare_runs.py" cluster="$out/cluster_int$bits.json" \
          reduce="$out/reduce_int$bits.json" | tee -a "$summary"
      done ;;
    decode-bench)
      # The decode tier at M = 1, 16, 32, 64 (DECODE_BENCH_M) with the stream-only floor alongside;
      # cuBLAS too unless DECODE_BENCH_ARGS says --no-cublas.
      timeout 300 "$build/bench/sailfish_bench" --tiers decode -m ${DECODE_BENCH_M:-1,16,32,64} \
        ${DECODE_BENCH_ARGS:-} --json "$out/decode.json" > "$out/decode.log" 2>&1
      note "decode bench: rc=$?" ;;
    conformance)
      python3 "$root/tests/oracle/test_matmul_nbits_gpu.py" --lib "$build/src/libsailfish_c.so" \
        > "$out/conformance.log" 2>&1
      note "matmul_nbits conformance: rc=$? $(tail -1 "$out/conformance.log")" ;;
    sanitize)
      built "$build/tests/sailfish_gpu_tests" || continue
      # compute-sanitizer's other three tools over every kernel family, on the suite's small-shape
      # tests (memcheck runs in the moe stage and in the stops' own calls): racecheck (shared
      # memory hazards: the warp-split kernel's stages are filled by cp.async and read by other
      # lanes after only a __syncwarp, the cluster epilogue writes into another CTA's shared
      # memory), synccheck (barriers and warp syncs with the wrong threads) and initcheck (global
      # memory read before any write: the workspace, partials, padded copies).
      # racecheck skips the prefill group: it does not model bulk copies (cp.async.bulk) that
      # complete on an mbarrier's transaction count, so it reports the consumers' loads of each
      # stage's bulk-copied weights and scales as races with the copies, both the reads after the
      # "full" wait and the stage's reuse after the "empty" one, and cuBLAS's own sm_90 kernels
      # likewise (docs/perf/README.md, stop 64). It does follow cp.async and its wait_group.
      # On an H100 (compute-sanitizer 2025.3.1) racecheck took ~80 s on decode-a, ~260 s on
      # decode-b and 10 s on moe; synccheck and initcheck 3-23 s a group: ~7 minutes in all, so
      # the whole stage fits one device call only on its own.
      # Each tool and group runs under a limit in seconds: SANITIZE_TIMEOUT_<tool> for one tool,
      # else SANITIZE_TIMEOUT, else 330 for racecheck and 120 for the others. SANITIZE_TOOLS and
      # SANITIZE_GROUPS pick; SANITIZE_FILTER (a gtest filter) replaces every picked group's
      # filter. Each test's line and time are kept (no --gtest_brief), so a run cut short by its
      # limit still shows how far it got.
      declare -A sanitize_filter=(
        [decode-a]='DecodeKernels.*:DecodeOddShapes.*:DecodeReduceKernel.*:DecodeClusterEpilogue.BitwiseEqualToTheReduceKernel'
        [decode-b]='DecodeStreamK.ForcedGridsMatchReference:DecodeWarpStages.*Match*Reference:DecodeWideWarps.ForcedWide*'
        [prefill]='PrefillOddShapes.*:PrefillStreamK.WholeTilesBetweenSharedPieces:PrefillSplitReduce.*:DenseOddShapes.*'
        [moe]='MoeAlignGpu.*:MoeGemmGpu.DecodeLayersInBothProjections:MoeGemmGpu.SelfAligned*:MoeGemmGpu.FusedCombine*'
      )
      for tool in ${SANITIZE_TOOLS:-racecheck synccheck initcheck}; do
        for group in ${SANITIZE_GROUPS:-decode-a decode-b prefill moe}; do
          if [ -z "${sanitize_filter[$group]:-}" ]; then
            note "sanitize: unknown group $group (decode-a decode-b prefill moe)"
            status=1
            continue
          fi
          if [ "$tool" = racecheck ] && [ "$group" = prefill ]; then
            note "sanitize racecheck prefill: skipped (bulk copies completing on mbarriers)"
            continue
          fi
          log=$out/sanitize_${tool}_$group.log
          # The tool's own exit code on a finding (9) is told apart from the tests' (1) and the
          # timeout's (124).
          limit_var=SANITIZE_TIMEOUT_$tool
          default_limit=120
          [ "$tool" = racecheck ] && default_limit=330
          limit=${!limit_var:-${SANITIZE_TIMEOUT:-$default_limit}}
          timeout -k 10 "$limit" compute-sanitizer --tool "$tool" --error-exitcode 9 \
            --print-limit 20 "$build/tests/sailfish_gpu_tests" \
            --gtest_filter="${SANITIZE_FILTER:-${sanitize_filter[$group]}}" > "$log" 2>&1
          rc=$?
          # A filter that matched nothing ran no test: not a pass (tests/scripts/
          # check_sanitize_filters.sh keeps the patterns matched on the CPU).
          grep -qE '^\[==========\] Running 0 tests' "$log" && rc=1
          note "sanitize $tool $group: rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | \
            tail -1) $(grep -E '^\[  (PASSED|FAILED) ' "$log" | head -2 | tr '\n' ' ')"
        done
      done ;;
    moe)
      built "$build/tests/sailfish_gpu_tests" && built "$build/bench/sailfish_moe_bench" || continue
      # MoE (docs/MOE.md): its GPU tests, under compute-sanitizer's memcheck at one token tile
      # size, then the MoE bench (int4, then int8 at one and eight tokens).
      "$build/tests/sailfish_gpu_tests" --gtest_brief=1 --gtest_filter='Moe*' > "$out/moe_tests.log" 2>&1
      note "moe tests: rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/moe_tests.log" | head -3 | tr '\n' ' ')"
      grep -E "Failure" -A3 "$out/moe_tests.log" | head -30
      compute-sanitizer --tool memcheck --error-exitcode 9 "$build/tests/sailfish_gpu_tests" \
        --gtest_brief=1 --gtest_filter='MoeAlignGpu.*:MoeGemmGpu.DecodeLayersInBothProjections:MoeGemmGpu.FusedAndUnfused*:MoeGemmGpu.FusedCombine*:MoeGemmGpu.Misaligned*:MoeGemmGpu.SelfAligned*' \
        > "$out/moe_memcheck.log" 2>&1
      note "moe memcheck: rc=$? $(grep -E 'ERROR SUMMARY' "$out/moe_memcheck.log" | head -1)"
      "$build/bench/sailfish_moe_bench" ${MOE_BENCH_ARGS:---baseline} > "$out/moe_bench.log" 2>&1
      note "moe bench int4: rc=$?"; cat "$out/moe_bench.log" | tee -a "$summary"
      "$build/bench/sailfish_moe_bench" --int8 --tokens 1,8 ${MOE_BENCH_ARGS:---baseline} \
        > "$out/moe_bench_int8.log" 2>&1
      note "moe bench int8: rc=$?"; cat "$out/moe_bench_int8.log" | tee -a "$summary" ;;
    moe-cublas)
      built "$build/bench/sailfish_moe_bench" || continue
      # The MoE bench beside cuBLAS (sailfish_moe_bench --cublas: the same expert GEMMs in bf16,
      # one grouped cuBLAS call), int4, in a run of its own so the moe stage's figures never
      # depend on it.
      "$build/bench/sailfish_moe_bench" --cublas ${MOE_CUBLAS_ARGS:---tokens 1,8,64,256} \
        > "$out/moe_bench_cublas.log" 2>&1
      note "moe bench beside cuBLAS: rc=$?"; cat "$out/moe_bench_cublas.log" | tee -a "$summary" ;;
    moe-block-rows)
      # The MoE block-rows probe (docs/perf/moe.md): the rule against forced 8-, 16- and 32-row
      # blocks at 64 and 256 tokens; its log is $out/moe_block_rows_probe.log.
      OUT=$out SAILFISH_BUILD_DIR=$build bash "$root/scripts/perf/moe_block_rows_probe.sh" \
        > "$out/moe_block_rows_table.md" 2>&1
      note "moe block-rows probe: rc=$?"; cat "$out/moe_block_rows_table.md" | tee -a "$summary" ;;
    dequant)
      "$build/bench/sailfish_dequant_bench" > "$out/dequant.log" 2>&1
      note "dequant bench: rc=$?"; cat "$out/dequant.log" | tee -a "$summary" ;;
    other-models-sweep)
      # The decode plan on layer shapes of other models than the default set (Qwen2.5 7B, 32B and
      # 72B, a Mixtral expert): auto against forced depths 1-4, int4 at M = 1 and 16, int8 at
      # M = 1; scripts/perf/split_table.py makes the table.
      shapes=q7.qkv=3584x4608,q7.o=3584x3584,q7.gate_up=3584x37888,q7.down=18944x3584
      shapes+=,q32.qkv=5120x7168,q32.o=5120x5120,q32.gate_up=5120x55296,q32.down=27648x5120
      shapes+=,q72.gate_up=8192x59136,q72.down=29568x8192,mx.w1=4096x14336,mx.w2=14336x4096
      large=l3-70b.gate_up=8192x57344,l3-70b.down=28672x8192,q72.gate_up=8192x59136
      large+=,q72.down=29568x8192,q32.gate_up=5120x55296
      for bits in 4 8; do
        ms=1,16
        [ "$bits" = 8 ] && ms=1
        bench --tiers decode --bits $bits --shapes "$shapes" -m $ms --no-cublas \
          --json "$out/other_b${bits}_auto.json" > "$out/other_b${bits}_auto.log" 2>&1
        for s in 1 2 3 4; do
          SAILFISH_DECODE_SPLITS=$s bench --tiers decode --bits $bits --shapes "$shapes" -m $ms \
            --no-cublas --json "$out/other_b${bits}_s$s.json" > "$out/other_b${bits}_s$s.log" 2>&1
        done
        python3 "$root/scripts/perf/split_table.py" "$out/other_b${bits}_auto.json" \
          "$out"/other_b${bits}_s?.json > "$out/other_b${bits}_table.md"
        note "other models, int$bits: rc=$?"
      done ;;
    tune-bench)
      # Measured planning (sailfish::tune, the bench's --tune) against plan()'s rules, each in its
      # own run, for the sets TUNE_SETS names: the other models' shapes (other_b4: int4 at M = 1,
      # 16 and 32; other_b8: int8 at M = 1), the default set at M = 1-64 (default), the Llama-3
      # set at M = 1, 4 and 16 (l3_b4), int8 at M = 1 and 4 (l3_b8), int8 with fp16 activations
      # (l3_b8_fp16), the largest layers, whose tunings the SM clock's dips had disturbed
      # (large_b4: int4 at M = 1, 4 and 16; large_b8: int8 at M = 1 and 4), and two token tiles
      # below 16 tokens (l3_mid_b4: Llama-3 at M = 9, 12 and 16; other_mid_b4: the other models'
      # shapes at M = 9 and 12), where the rules' plan can differ from M = 16's. The tuned run rechecks
      # every candidate in the bench's harness (--tune-recheck); scripts/perf/tune_table.py makes
      # the tables. TUNE_GUARD_AB=1 adds a tuned run without tune()'s clock guard
      # (--tune-clock-drop 0), and scripts/perf/tune_clock_summary.py sets the two side by side.
      shapes=q7.qkv=3584x4608,q7.o=3584x3584,q7.gate_up=3584x37888,q7.down=18944x3584
      shapes+=,q32.qkv=5120x7168,q32.o=5120x5120,q32.gate_up=5120x55296,q32.down=27648x5120
      shapes+=,q72.gate_up=8192x59136,q72.down=29568x8192,mx.w1=4096x14336,mx.w2=14336x4096
      large=l3-70b.gate_up=8192x57344,l3-70b.down=28672x8192,q72.gate_up=8192x59136
      large+=,q72.down=29568x8192,q32.gate_up=5120x55296
      for set in ${TUNE_SETS:-other_b4 other_b8 default}; do
        case $set in
          other_b4) args=(--bits 4 --shapes "$shapes" -m 1,16,32) ;;
          other_b8) args=(--bits 8 --shapes "$shapes" -m 1) ;;
          default) args=(-m 1,16,24,32,48,64) ;;
          l3_b4) args=(-m 1,4,16) ;;
          l3_b8) args=(--bits 8 -m 1,4) ;;
          l3_b8_fp16) args=(--bits 8 --dtype fp16 -m 1,4) ;;
          large_b4) args=(--bits 4 --shapes "$large" -m 1,4,16) ;;
          large_b8) args=(--bits 8 --shapes "$large" -m 1,4) ;;
          l3_mid_b4) args=(-m 9,12,16) ;;
          other_mid_b4) args=(--bits 4 --shapes "$shapes" -m 9,12) ;;
          *) note "tune bench: unknown set $set"; continue ;;
        esac
        modes=(auto tuned)
        [ "${TUNE_GUARD_AB:-0}" = 1 ] && modes+=(tuned_noguard)
        for mode in "${modes[@]}"; do
          flag=()
          [ $mode = tuned ] && flag=(--tune --tune-recheck)
          [ $mode = tuned_noguard ] && flag=(--tune --tune-recheck --tune-clock-drop 0)
          timeout 280 "$build/bench/sailfish_bench" "${args[@]}" "${flag[@]}" --no-cublas \
            --json "$out/tune_${set}_$mode.json" > "$out/tune_${set}_$mode.log" 2>&1
          note "tune bench $set $mode: rc=$?"
        done
        python3 "$root/scripts/perf/tune_table.py" "$out/tune_${set}_auto.json" \
          "$out/tune_${set}_tuned.json" > "$out/tune_${set}_table.md"
        if [ "${TUNE_GUARD_AB:-0}" = 1 ]; then
          python3 "$root/scripts/perf/tune_clock_summary.py" "$out/tune_${set}_tuned_noguard.json" \
            "$out/tune_${set}_tuned.json" > "$out/tune_${set}_clock.md"
        fi
      done ;;
    decode-sweep)
      # The decode tier on every default shape: the heuristic (with cuBLAS alongside), forced split
      # depths, the red.global epilogue, no programmatic dependent launch, int8; then the
      # decode/dense crossover.
      bench --tiers decode -m 1,16,32,64 --json "$out/decode_auto.json" > "$out/decode_auto.log" 2>&1
      for s in 4 8; do
        SAILFISH_DECODE_SPLITS=$s bench --tiers decode -m 1,16 --no-cublas \
          --json "$out/decode_s$s.json" > "$out/decode_s$s.log" 2>&1
      done
      SAILFISH_ATOMIC_EPILOGUE=1 bench --tiers decode -m 1,16 --no-cublas \
        --json "$out/decode_atomic.json" > "$out/decode_atomic.log" 2>&1
      SAILFISH_PDL=0 bench --tiers decode -m 1,16 --no-cublas --json "$out/decode_nopdl.json" \
        > "$out/decode_nopdl.log" 2>&1
      bench --tiers decode -m 1,16 --bits 8 --json "$out/decode_int8.json" \
        > "$out/decode_int8.log" 2>&1
      bench --tiers decode,dense -m 64,128,256 --no-cublas --json "$out/crossover.json" \
        > "$out/crossover.log" 2>&1
      note "decode sweep done" ;;
    dense-large)
      bench --tiers dense,auto -m 256,1024,4096 --json "$out/dense_large.json" \
        > "$out/dense_large.log" 2>&1
      note "dense large: rc=$?" ;;
    int8)
      bench --tiers decode,auto -m 1,16,1024,4096 --bits 8 --json "$out/int8.json" \
        > "$out/int8.log" 2>&1
      note "int8: rc=$?" ;;
    bench-default)
      bench --json "$out/bench_default.json" > "$out/bench_default.log" 2>&1
      note "bench default: rc=$?" ;;
    spec-rounds=*)
      # A variant spec's rounds, by the command its "# run:" comment gives (scripts/perf/
      # spec_run.py), in $OUT/rounds: device_variant_rounds.sh packs what it finds there into
      # variant_summary.md and variant_rounds.tar.xz, so the other stages' logs stay out of it.
      spec=${stage#spec-rounds=}
      command=$(python3 "$root/scripts/perf/spec_run.py" "$spec") ||
        { note "spec-rounds: no run command in $spec"; exit 2; }
      # Its default build is this round's where that has been made (device_variant_rounds.sh,
      # VARIANT_REUSE_BUILD): a second build of the same tree would take minutes.
      reuse=
      [ -x "$build/bench/sailfish_bench" ] && reuse=$build
      mkdir -p "$out/rounds"
      (cd "$root" && export OUT="$out/rounds" VARIANT_REUSE_BUILD="$reuse" && eval "$command") \
        > "$out/spec_rounds.log" 2>&1
      note "spec-rounds $spec: rc=$? (tables in rounds/variant_summary.md)" ;;
    *) note "unknown stage $stage"; exit 2 ;;
  esac
done
exit "$status"
