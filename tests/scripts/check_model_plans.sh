#!/usr/bin/env bash
# scripts/perf/model_plans.py with the CPU planner model's tool: a made-up spec whose run-time
# variants plan apart on one row and alike on another (phi3.down at four splits pads to two CTAs
# an SM when asked; l3-8b.down's clusters of four are not all resident padded, so it stays
# unpadded), a build variant with flags of its own (not modelled), and a variant the run comment
# lacks (an error).
#   tests/scripts/check_model_plans.sh SOURCE_DIR TOOL
set -euo pipefail
root=$1
tool=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/spec.txt" <<'SPEC'
# run: scripts/device_variant_rounds.sh SPEC auto= d8=-DSAILFISH_DECODE_DEEP_STAGES=8 \
#   f4=env:auto:SAILFISH_DECODE_SPLITS=4 f4p=env:auto:SAILFISH_DECODE_SPLITS=4,SAILFISH_DECODE_SPREAD=1
m1|auto,f4,f4p,d8|--tiers decode --no-cublas -m 1 --shapes phi3.down=8192x3072,l3-8b.down
SPEC
python3 "$root/scripts/perf/model_plans.py" "$work/spec.txt" --tool "$tool" > "$work/out.md"
expect() {
  grep -qF -- "$1" "$work/out.md" || { echo "FAIL: no line with: $1"; cat "$work/out.md"; exit 1; }
}
expect "not modelled (builds with their own flags): d8"
expect "| phi3.down | 1 | tiles=1 splits=5 warp_stages=4 resident=4 shared=39440 | tiles=1 splits=4 warp_stages=6 resident=3 shared=57360 | tiles=1 splits=4 warp_stages=6 spread=2 resident=2 shared=76928 |"
expect "| l3-8b.down | 1 | tiles=1 splits=7 warp_stages=4 resident=4 shared=40464 | tiles=1 splits=4 warp_stages=4 resident=4 shared=38928 | = f4 |"
expect "m1: rows where a variant plans as an earlier one, of 2: auto 0, f4 0, f4p 1"
sed -i 's/auto,f4,f4p,d8/auto,f4,f9/' "$work/spec.txt"
if python3 "$root/scripts/perf/model_plans.py" "$work/spec.txt" --tool "$tool" > /dev/null 2>&1; then
  echo "FAIL: a variant the run comment lacks passed"; exit 1
fi
echo "ok: model plans of a made-up spec"
