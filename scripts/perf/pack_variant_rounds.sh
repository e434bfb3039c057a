#!/usr/bin/env bash
# Packs what scripts/device_variant_rounds.sh left in OUT_DIR: the tables, with every variant's
# launch strings, to OUT_DIR/variant_summary.md (and stdout), then the rounds' JSON and logs (the
# builds' logs too) into OUT_DIR/variant_rounds.tar.xz, removing the loose files. The device
# returns only a few files from $OUT; scripts/perf/variant_summary.py reads the archive as it is.
#   scripts/perf/pack_variant_rounds.sh OUT_DIR SPEC_FILE
set -euo pipefail
out=$1 spec=$2
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/variant_summary.py" "$out" "$spec" --launches | tee "$out/variant_summary.md"
cd "$out"
shopt -s nullglob
files=(*.json *.log)
if [ "${#files[@]}" -eq 0 ]; then
  echo "pack_variant_rounds: no JSON or logs in $out" >&2
  exit 1
fi
tar -cJf variant_rounds.tar.xz "${files[@]}"
rm -f -- "${files[@]}"
echo "packed ${#files[@]} files into $out/variant_rounds.tar.xz"
