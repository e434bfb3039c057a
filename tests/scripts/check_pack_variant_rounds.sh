#!/usr/bin/env bash
# scripts/perf/pack_variant_rounds.sh on v51's stored A/B rounds: the device returns only a few
# files, so the pack must leave just the summary and one archive, and the summary read back from
# that archive must be the one printed before packing. A folder with no rounds is an error.
#   tests/scripts/check_pack_variant_rounds.sh SOURCE_DIR
set -euo pipefail
root=$1
data=$root/docs/perf/data
spec=$data/decode_v51_quad_padded_spec.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/out" "$work/empty"
tar -C "$work/out" -xJf "$data/decode_v51_quad_padded_rounds_json.tar.xz"
rounds=$(find "$work/out" -name '*.json' | wc -l)
python3 "$root/scripts/perf/variant_summary.py" "$work/out" "$spec" --launches > "$work/before.md"
"$root/scripts/perf/pack_variant_rounds.sh" "$work/out" "$spec" > /dev/null
left=$(find "$work/out" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')
[ "$left" = "variant_rounds.tar.xz variant_summary.md " ] || { echo "FAIL: left $left"; exit 1; }
cmp "$work/before.md" "$work/out/variant_summary.md" || { echo "FAIL: summary differs"; exit 1; }
python3 "$root/scripts/perf/variant_summary.py" "$work/out/variant_rounds.tar.xz" "$spec" \
  --launches > "$work/after.md"
cmp "$work/before.md" "$work/after.md" || { echo "FAIL: archive reads back differently"; exit 1; }
packed=$(tar -tJf "$work/out/variant_rounds.tar.xz" | grep -c '\.json$')
[ "$packed" -eq "$rounds" ] || { echo "FAIL: $packed of $rounds rounds packed"; exit 1; }
grep -q '^| q32.down | 1 | s2/e3/w4/p1/v8 | s4/e3/w4/p1/x3 |$' "$work/after.md" ||
  { echo "FAIL: no launch table row for q32.down at M = 1"; exit 1; }
if "$root/scripts/perf/pack_variant_rounds.sh" "$work/empty" "$spec" > /dev/null 2>&1; then
  echo "FAIL: an empty folder packed"; exit 1
fi
echo "ok: $rounds rounds packed and read back"
