#!/usr/bin/env python3
"""Side by side: the same bench rows (shape, M, tier) from two or more bench JSON files.

Usage: compare_runs.py NAME=FILE [NAME=FILE ...] [--anchors FILE]   (a markdown table on stdout)
Prints, per (shape, M): each run's microseconds and launch (tokens, splits, epilogue), each later
run's time as a ratio of the first's, and the first run's stream-only floor, roofline share, time
against the floor and speed against cuBLAS (when the run measured it). With --anchors, the best
peer of that file (tinygemm, both Marlins, Machete, Swordfish) and the first run's speed against
it. Rows missing from a run show "-".
"""
import argparse
import json
import re

from anchors import best_peers


def rows_of(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for row in data["rows"]:
        if row.get("status") != "ok":
            continue
        out[(row["shape"], row["M"], row["tier"])] = row
    return out


def short_launch(text):
    fields = dict(re.findall(r"(\w+)=(\d+)", text or ""))
    labels = (("tokens", "t"), ("splits", "s"), ("epilogue", "e"), ("warp_stages", "w"),
              ("stream_k_strips", "k"), ("cluster_push", "p"), ("stream_k", "sk"),
              ("spread", "x"), ("warps", "v"), ("resident", "r"))
    return "/".join(f"{label}{fields[k]}" for k, label in labels if k in fields)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="NAME=FILE")
    parser.add_argument("--anchors", help="peer figures (../shared/anchors/h200-anchors.json)")
    args = parser.parse_args()
    peers = best_peers(args.anchors) if args.anchors else {}
    runs = []
    for spec in args.runs:
        name, _, path = spec.partition("=")
        runs.append((name, rows_of(path)))
    keys = sorted({k for _, rows in runs for k in rows}, key=lambda k: (k[1], k[0], k[2]))
    header = ["shape", "M", "tier"]
    for i, (name, _) in enumerate(runs):
        header += [f"{name} us", f"{name} launch"] + ([f"{name}/{runs[0][0]}"] if i else [])
    header += ["floor us", "% roofline", "x floor", "x cuBLAS"]
    # Results since v40 time the floor in several forms (docs/BENCH.md): name the row's form and
    # give the time against the floor of earlier results, nc/plain, for comparisons across them.
    forms = any(row.get("floor_forms_us") for _, rows in runs for row in rows.values())
    if forms:
        header += ["floor form", "x nc/plain floor"]
    if args.anchors:
        header += ["best peer us", "x best peer"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for key in keys:
        cells = [key[0], str(key[1]), key[2]]
        first = runs[0][1].get(key)
        for i, (_, rows) in enumerate(runs):
            row = rows.get(key)
            cells += [f"{row['us']:.2f}" if row else "-",
                      short_launch(row.get("launch")) if row else "-"]
            if i:
                ratio = row["us"] / first["us"] if row and first else None
                cells.append(f"{ratio:.3f}" if ratio else "-")
        base = first or next((rows[key] for _, rows in runs if key in rows), None)
        floor = base.get("floor_us") if base else None
        cells += [f"{floor:.2f}" if floor else "-",
                  f"{base['pct_roofline']:.1f}" if base and base.get("pct_roofline") else "-",
                  f"{base['us'] / floor:.2f}" if floor else "-",
                  f"{base['cublas_us'] / base['us']:.2f}"
                  if base and base.get("cublas_us") else "-"]
        if forms:
            plain = (base.get("floor_forms_us") or {}).get("nc/plain") if base else None
            cells += [base.get("floor_form") or "-" if base else "-",
                      f"{base['us'] / plain:.2f}" if plain else "-"]
        if args.anchors:
            peer = peers.get(key[:2])
            cells += [f"{peer:.1f}" if peer else "-",
                      f"{peer / base['us']:.2f}" if peer and base else "-"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
