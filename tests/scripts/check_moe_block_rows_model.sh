#!/usr/bin/env bash
# scripts/perf/moe_block_rows_model.py: its binomial expectations against identities they must
# meet (one-row blocks count the mean rows, blocks past any count the touched experts), its rule
# against moe_block_rows_for's documented cases, and the table's rows.
#   tests/scripts/check_moe_block_rows_model.sh SOURCE_DIR
set -euo pipefail
root=$1
PYTHONPATH=$root/scripts/perf python3 - "$root" <<'PY'
import math, sys
import moe_block_rows_model as m

for tokens, p in ((1, 0.25), (64, 0.25), (256, 8 / 256), (7, 1.0)):
    mean = m.expected_blocks(tokens, p, 1)
    assert math.isclose(mean, tokens * p, rel_tol=1e-9), (tokens, p, mean)
    touched = m.expected_blocks(tokens, p, tokens + 1)
    assert math.isclose(touched, 1 - (1 - p) ** tokens, rel_tol=1e-9), (tokens, p, touched)
# Mixtral at 64 tokens: 16 average rows an expert, so the rule's 16-row block; ~1.43 passes.
assert m.rule_block_rows(128, 8) == 16
assert m.rule_block_rows(8, 128) == 8 and m.rule_block_rows(2048, 64) == 32
touched, rows = m.layer_rows(8, 2, 64)
assert math.isclose(touched, 8 * (1 - 0.75 ** 64)), touched
assert rows[32][1] < 1.001 and 1.40 < rows[16][1] < 1.46, rows
layers = m.bench_layers(m.LAYERS_HEADER)
assert ("mixtral-8x7b", 8, 2) in layers and len(layers) == 5, layers
budget = m.loop_instructions(m.LOOP_BUDGET)
assert budget[8] < budget[16] < budget[32], budget
print("ok: moe_block_rows_model.py")
PY
table=$(python3 "$root/scripts/perf/moe_block_rows_model.py" --tokens 1,64)
[ "$(echo "$table" | grep -v '^| layer' | grep -c '^| [a-z]')" = 10 ] ||
  { echo "FAIL: not 5 layers x 2 token counts:"; echo "$table"; exit 1; }
if python3 "$root/scripts/perf/moe_block_rows_model.py" --tokens 0 2> /dev/null; then
  echo "FAIL: --tokens 0 was accepted"; exit 1
fi
echo "ok: the table"
