#!/usr/bin/env bash
# scripts/perf/moe_self_align_probe.sh over a stand-in sailfish_moe_bench whose time names the
# variant's environment: each (layer, proj) row gets every variant's two rounds, in order.
#   tests/scripts/check_moe_self_align_probe.sh SOURCE_DIR
set -euo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build/bench" "$work/out"
cat > "$work/build/bench/sailfish_moe_bench" <<'BENCH'
#!/usr/bin/env bash
# us = 10 * splits + self-align (unset 0, 0 -> 1, 1 -> 2): 0, 22, 21 or 2 (down: + 100).
us=$(( ${SAILFISH_MOE_SPLITS:-0} * 10 + ${SAILFISH_MOE_SELF_ALIGN:--1} + 1 ))
echo "streaming read: 4.6 TB/s"
echo "| layer | proj | tokens | experts hit | us | floor us | x floor | % roof | plan |"
echo "|---|---|---|---|---|---|---|---|---|"
echo "| q | gate_up | 1 | 8 | $us.00 | 2.00 | 1.00 | 50.0 | p |"
echo "| q | down | 1 | 8 | $((us + 100)).00 | 2.00 | 1.00 | 50.0 | p |"
BENCH
chmod +x "$work/build/bench/sailfish_moe_bench"
table=$(OUT=$work/out SAILFISH_BUILD_DIR=$work/build bash "$root/scripts/perf/moe_self_align_probe.sh")
want='| q | down | 100.00/100.00 | 122.00/122.00 | 121.00/121.00 | 102.00/102.00 |
| q | gate_up | 0.00/0.00 | 22.00/22.00 | 21.00/21.00 | 2.00/2.00 |'
[ "$(echo "$table" | tail -2)" = "$want" ] || { echo "FAIL: the table is:"; echo "$table"; exit 1; }
[ "$(grep -c '^## ' "$work/out/moe_self_align_probe.log")" = 8 ] ||
  { echo "FAIL: not 2 rounds of 4 variants"; exit 1; }
echo "ok: moe_self_align_probe.sh"
