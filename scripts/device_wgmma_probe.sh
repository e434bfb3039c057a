#!/usr/bin/env bash
# The tensor-core mainloop probe (bench/wgmma_probe) on a GPU host (the device tool): builds it
# with nvcc alone (no CMake, no dependencies), runs it, then profiles two of its kernels with
# Nsight Compute (stall reasons, issue and pipe use): the producer-warp ring (stream3<32, 2>, its
# first launch) and the same mainloop without copies or barriers (rs-dq, 32 tokens, its
# 4-warpgroup launch). Output in $OUT (or out/): probe.txt, ncu_*.txt.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
probe=/tmp/sailfish_wgmma_probe
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -DNDEBUG \
  -I"$root/src" "$root/bench/wgmma_probe/wgmma_probe.cu" -o "$probe" 2>&1 | grep -v C7519
"$probe" > "$out/probe.txt" 2>&1
echo "probe: rc=$?"
sections=(--section SpeedOfLight --section WarpStateStats --section SchedulerStats
          --section ComputeWorkloadAnalysis --section InstructionStats)
profile() {  # name, mangled-name regex, launches to skip
  timeout 120 ncu --clock-control none --kernel-name-base mangled --kernel-name "regex:$2" \
    --launch-skip "$3" --launch-count 1 "${sections[@]}" "$probe" > "$out/ncu_$1.txt" 2>&1
  echo "ncu $1: rc=$?"
}
[ "${PROBE_PROFILE:-1}" = 1 ] && {
  profile stream3_n32 'stream3_kernelILi32ELi2E' 0
  profile rsdq_n32 'probe_kernelILNS_4FormE2ELi32E' 6
}
exit 0
