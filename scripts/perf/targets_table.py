#!/usr/bin/env python3
"""The decode issue's targets (issue 4) against bench results: one row per Llama-3 shape, then
each target's status with the rows that meet it.

Usage: targets_table.py --int4 NAME=FILE [NAME=FILE ...] --int8 NAME=FILE [...]
                        --anchors FILE [--deterministic FILE]   (markdown on stdout)

Bench JSONs of the auto tier, int4 g128 and int8 (u8b128) bf16. Where several files hold the same
(shape, M), the later one's row counts (a version that changed only some rows is listed after
the full run it updates), and the cell names it: "94.2 (v50)". --deterministic: a run of the
same rows in deterministic mode, taken in the same process as the first int4 file, so its times
compare with that file's.

A last line names the missed roofline rows whose stream-only floor (the bench's floor_us: a kernel
that only reads the same bytes, launched the same way in the same run) is itself under the
target, so no single launch would meet it there.

The targets (docs/perf/decode.md): the 70B shapes at M = 1 and 16 at >= 90% of the roofline;
every shape at M = 1 and 16 within 1.15x the stream-only floor; M = 32 and 64 at >= 1.3x the
best peer of the anchors file; int8 at M = 1 at >= 85% of the roofline; deterministic mode at
most 10% slower.
"""
import argparse
import json

from anchors import best_peers

SHAPES = ("l3-8b.qkv", "l3-8b.o", "l3-8b.gate_up", "l3-8b.down",
          "l3-70b.qkv", "l3-70b.o", "l3-70b.gate_up", "l3-70b.down")
ROOFLINE_70B = 90.0
FLOOR_RATIO = 1.15
PEER_RATIO = 1.3
ROOFLINE_INT8 = 85.0
DETERMINISTIC_RATIO = 1.10


def ok_rows(path):
    with open(path) as f:
        return {(r["shape"], r["M"]): r for r in json.load(f)["rows"] if r.get("status") == "ok"}


def merged(specs):
    """{(shape, M): (row, the name of its file, or None for the first file)}."""
    rows = {}
    for i, spec in enumerate(specs):
        name, _, path = spec.partition("=")
        for key, row in ok_rows(path).items():
            rows[key] = (row, name if i else None)
    return rows


def cell(value, source, bold=False):
    if value is None:
        return "-"
    text = f"**{value}**" if bold else value
    return f"{text} ({source})" if source else text


def floor_ratio(row):
    return row["us"] / row["floor_us"] if row.get("floor_us") else None


def ratio_text(ratio, limit):
    """Two decimals, or three where two would round a miss onto the limit (1.155 -> "1.155")."""
    if ratio is None:
        return None
    return f"{ratio:.3f}" if round(ratio, 2) <= limit < ratio else f"{ratio:.2f}"


def listed(names):
    return ", ".join(names) if names else "none"


def floor_pct(row):
    """The stream-only floor's own % of the roofline (the row's % times its floor ratio): no
    one-launch kernel reading the same bytes in the same graph ran faster, so a roofline target
    above it is out of that kernel's reach."""
    ratio = floor_ratio(row)
    return row["pct_roofline"] * ratio if ratio is not None else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--int4", nargs="+", required=True, metavar="NAME=FILE")
    parser.add_argument("--int8", nargs="+", default=[], metavar="NAME=FILE")
    parser.add_argument("--anchors", required=True)
    parser.add_argument("--deterministic")
    args = parser.parse_args()
    int4, int8 = merged(args.int4), merged(args.int8)
    peers = best_peers(args.anchors)

    print("| shape | M = 1 µs | % roof | × floor | M = 16 µs | % roof | × floor | "
          "M = 32 × best peer | M = 64 × best peer | int8 M = 1 % roof |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    met = {"roof": [], "floor": [], "peer": [], "int8": []}
    capped = {"roof": [], "int8": []}  # missed rows whose floor is itself under the target
    counted = {"roof": 0, "floor": 0, "peer": 0, "int8": 0}
    for shape in SHAPES:
        cells = [shape]
        for m in (1, 16):
            row, source = int4.get((shape, m), (None, None))
            if row is None:
                cells += ["-", "-", "-"]
                continue
            pct, ratio = row["pct_roofline"], floor_ratio(row)
            big = shape.startswith("l3-70b")
            roof_met = big and pct >= ROOFLINE_70B
            floor_met = ratio is not None and ratio <= FLOOR_RATIO
            counted["roof"] += big
            counted["floor"] += ratio is not None
            if roof_met:
                met["roof"].append(f"{shape} M = {m}")
            cap = floor_pct(row)
            if big and not roof_met and cap is not None and cap < ROOFLINE_70B:
                capped["roof"].append(f"{shape} M = {m} ({cap:.1f}%)")
            if floor_met:
                met["floor"].append(f"{shape} M = {m}")
            cells += [cell(f"{row['us']:.2f}", source), cell(f"{pct:.1f}", source, roof_met),
                      cell(ratio_text(ratio, FLOOR_RATIO), source, floor_met)]
        for m in (32, 64):
            row, source = int4.get((shape, m), (None, None))
            peer = peers.get((shape, m))
            if row is None or peer is None:
                cells.append("-")
                continue
            speedup = peer / row["us"]
            counted["peer"] += 1
            if speedup >= PEER_RATIO:
                met["peer"].append(f"{shape} M = {m}")
            cells.append(cell(f"{speedup:.2f}", source, speedup >= PEER_RATIO))
        row, source = int8.get((shape, 1), (None, None))
        if row is None:
            cells.append("-")
        else:
            counted["int8"] += 1
            if row["pct_roofline"] >= ROOFLINE_INT8:
                met["int8"].append(shape)
            else:
                cap = floor_pct(row)
                if cap is not None and cap < ROOFLINE_INT8:
                    capped["int8"].append(f"{shape} ({cap:.1f}%)")
            cells.append(cell(f"{row['pct_roofline']:.1f}", source,
                              row["pct_roofline"] >= ROOFLINE_INT8))
        print("| " + " | ".join(cells) + " |")

    print("\n| target | rows that meet it |")
    print("|---|---|")
    print(f"| 70B shapes at M = 1 and 16 ≥ {ROOFLINE_70B:.0f}% of the roofline | "
          f"{len(met['roof'])} of {counted['roof']}: {listed(met['roof'])} |")
    print(f"| M = 1 and 16 ≤ {FLOOR_RATIO}× the floor | {len(met['floor'])} of "
          f"{counted['floor']}: {listed(met['floor'])} |")
    print(f"| M = 32 and 64 ≥ {PEER_RATIO}× the best peer | {len(met['peer'])} of "
          f"{counted['peer']}: {listed(met['peer'])} |")
    print(f"| int8 at M = 1 ≥ {ROOFLINE_INT8:.0f}% of the roofline | {len(met['int8'])} of "
          f"{counted['int8']}: {listed(met['int8'])} |")
    if args.deterministic:
        first = ok_rows(args.int4[0].partition("=")[2])
        ratios = [row["us"] / first[key]["us"] for key, row in ok_rows(args.deterministic).items()
                  if key in first and key[1] in (1, 16)]
        if ratios:
            within = sum(r <= DETERMINISTIC_RATIO for r in ratios)
            print(f"| deterministic ≤ {DETERMINISTIC_RATIO:.2f}× the default (M = 1 and 16) | "
                  f"{within} of {len(ratios)}: {min(ratios):.3f}-{max(ratios):.3f}× |")

    print(f"\nMissed rows whose floor is itself under the target (its % of the roofline), out of "
          f"reach of one launch: {ROOFLINE_70B:.0f}% target {listed(capped['roof'])}; "
          f"{ROOFLINE_INT8:.0f}% int8 target {listed(capped['int8'])}.")


if __name__ == "__main__":
    main()
