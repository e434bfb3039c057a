#!/usr/bin/env bash
# The device returns at most 8 files from $OUT (the device tool's limits). Where OUT_DIR holds
# more, every file but the KEEP ones (paths relative to OUT_DIR) and earlier archives (*.tar.gz)
# goes into OUT_DIR/ARCHIVE (tar -xzf to read it), so none is dropped, and a line says so.
# device_round.sh and device_decode_final.sh call it on their way out, so a call running both
# (the build stage, then the final runs) stays within the limit too.
#   scripts/pack_out.sh OUT_DIR ARCHIVE [KEEP...]
set -euo pipefail
out=$1 archive=$2
shift 2
[ -d "$out" ] || exit 0
cd "$out"
mapfile -t all < <(find . -type f | sed 's|^\./||' | sort)
[ "${#all[@]}" -le 8 ] && exit 0
files=()
for f in "${all[@]}"; do
  case "$f" in *.tar.gz) continue ;; esac
  keep=0
  for k in "$@"; do [ "$f" = "$k" ] && keep=1; done
  [ $keep = 1 ] || files+=("$f")
done
[ "${#files[@]}" -gt 0 ] || exit 0
tar -czf "$archive" -- "${files[@]}"
rm -f -- "${files[@]}"
echo "packed ${#files[@]} files into $archive (the device returns 8 from \$OUT)"
