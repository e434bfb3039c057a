#!/usr/bin/env bash
# The CPU planner model's decode plans for a fixed set of shapes, M and formats against
# tests/model/golden_plans.txt: a change to a planning rule shows here, row by row, every plan it
# moves (on the model: docs/DECODE.md, "The planner without a GPU"). A change that means to move
# plans rewrites the file (--write) and its diff is the review.
#   tests/model/check_golden_plans.sh TOOL [--write]
set -euo pipefail
tool=$1
golden=$(dirname "$0")/golden_plans.txt
# Llama-3 8B and 70B, and the other models' layers the depth sweeps measured (v31-v51).
shapes=l3-8b.qkv,l3-8b.o,l3-8b.gate_up,l3-8b.down,l3-70b.qkv,l3-70b.o,l3-70b.gate_up,l3-70b.down
shapes+=,q32.qkv=5120x7168,q32.o=5120x5120,q32.down=27648x5120,q14.down=13824x5120
shapes+=,q7.down=18944x3584,phi3.down=8192x3072,g27.down=21504x5376,ds.down=18432x7168
shapes+=,mx.w2=14336x4096,router=2880x32
ms=1,2,4,8,9,12,16,24,32,48,64
# The rules' own plans: no SAILFISH_* setting of the caller's applies.
unset $(env | grep -o '^SAILFISH_[A-Z0-9_]*' || true)
plans() {
  for format in "--bits 4" "--bits 8" "--bits 4 --dtype fp16" "--bits 4 --zero-points"; do
    # shellcheck disable=SC2086  # a format is a word list by design
    "$tool" --shapes "$shapes" -m "$ms" $format | sed "s/^/[$format] /"
  done
}
if [ "${2:-}" = "--write" ]; then
  plans > "$golden"
  echo "wrote $(wc -l < "$golden") plans to $golden"
  exit 0
fi
if ! diff <(plans) "$golden" > /tmp/golden_plans_diff.$$ 2>&1; then
  echo "FAIL: the model's plans differ from $golden (< now, > the file):"
  head -60 /tmp/golden_plans_diff.$$
  rm -f /tmp/golden_plans_diff.$$
  exit 1
fi
rm -f /tmp/golden_plans_diff.$$
echo "ok: $(wc -l < "$golden") plans as in $golden"
