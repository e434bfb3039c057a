#!/usr/bin/env bash
# scripts/perf/depth_table.py: on v51's stored depth rounds (launch strings without the plan's
# residency, which came with stop 49), and on made-up rounds of one row whose counts and rank
# correlations are worked out by hand below. A spec line with no rounds is an error.
#   tests/scripts/check_depth_table.sh SOURCE_DIR
set -euo pipefail
root=$1
data=$root/docs/perf/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
table=$root/scripts/perf/depth_table.py
expect() {
  grep -qF -- "$1" "$2" || { echo "FAIL: no line with: $1"; cat "$2"; exit 1; }
}

python3 "$table" "$data/decode_v51_depth_json.tar.xz" "$data/decode_v51_depth_spec.txt" \
  > "$work/v51.md"
expect "| auto | 9.76 | 1.000 | 2 | 4 | 4 | yes | 256 | 2 | - | 2 | 16 | 128 | - |" "$work/v51.md"
expect "| f3 | 35.16 | 1.277 | 3 | 4 | 4 | no | 384 | 3 | - | 3 | 38 | 450 | - |" "$work/v51.md"

# One row, K 8192 x N 3072 (48 strips, 128 k-blocks), three variants over two rounds:
#   f8: 384 CTAs padded to 3 an SM: 16 blocks a CTA, 4 a warp, 48 on the SM; 40 KB a CTA of which
#       3/4 in flight: 30 KB x 3;
#   f2: 96 CTAs, share 1, up to 4 an SM unpadded: 64 blocks a CTA, 16 a warp, 64-256 on the SM;
#       27.4 KB in flight a CTA;
#   auto: 240 CTAs, share 2, up to 4: 26 blocks a CTA, 7 a warp, 52-104 on the SM.
# Times f8 < f2 < auto; SM blocks (even) order them f8, auto, f2: rho = 1 - 6 * 2 / 24 = +0.5.
python3 - "$work/rounds" <<'PY'
import json, os, sys
out = sys.argv[1]
os.makedirs(out)
plans = {"auto": ("splits=5 epilogue=3 warp_stages=4 resident=4 shared=37376", (7.40, 7.48)),
         "f2": ("splits=2 epilogue=3 warp_stages=4 resident=4 shared=37376", (6.43, 6.43)),
         "f8": ("splits=8 epilogue=3 warp_stages=4 spread=3 resident=3 shared=40960", (5.87, 5.87))}
for name, (launch, times) in plans.items():
    for r, us in enumerate(times, 1):
        row = {"shape": "x.down", "M": 1, "K": 8192, "N": 3072, "status": "ok", "us": us,
               "launch": "warp_split tiles=1 m_groups=1 " + launch}
        json.dump({"rows": [row]}, open(f"{out}/d_{name}_{r}.json", "w"))
PY
printf 'd|auto,f2,f8|--shapes x.down=8192x3072\n' > "$work/spec.txt"
python3 "$table" "$work/rounds" "$work/spec.txt" > "$work/made.md"
expect "| f8 | 5.87 | 1.000 | 8 | 4 | 4 | yes | 384 | 3 | 3 | 3 | 4 | 48 | 90 |" "$work/made.md"
expect "| f2 | 6.43 | 1.095 | 2 | 4 | 4 | no | 96 | 1 | 4 | 1-4 | 16 | 64-256 | 27-110 |" "$work/made.md"
expect "| auto | 7.44 | 1.267 | 5 | 4 | 4 | no | 240 | 2 | 4 | 2-4 | 7 | 52-104 | 55-110 |" "$work/made.md"
expect "rank correlation with the time: SM blocks (even) +0.50, SM blocks (stacked) +0.50, blocks a warp +0.50, in flight (even) -0.50, splits -0.50" "$work/made.md"

printf 'e|auto|--shapes x\n' > "$work/empty_spec.txt"
if python3 "$table" "$work/rounds" "$work/empty_spec.txt" > /dev/null 2>&1; then
  echo "FAIL: a spec line without rounds passed"; exit 1
fi
echo "ok: depth tables of v51's rounds and of made-up ones"
