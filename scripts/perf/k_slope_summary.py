#!/usr/bin/env python3
"""k_slope_probe.sh's fits: per file and M, time = fixed + slope x K for the kernel and the floor.

usage: k_slope_summary.py DIR
"""
import glob
import json
import os
import sys


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def main():
    print("| run | M | K | us | floor us | x floor |")
    print("|---|---|---|---|---|---|")
    fits = []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "kslope_*.json"))):
        rows = [r for r in json.load(open(path))["rows"] if r.get("status") == "ok"]
        name = os.path.basename(path)[7:-5]
        for m in sorted({r["M"] for r in rows}):
            sel = sorted((r for r in rows if r["M"] == m), key=lambda r: r["K"])
            for r in sel:
                print(f"| {name} | {m} | {r['K']} | {r['us']:.2f} | {r['floor_us']:.2f} "
                      f"| {r['ratio_to_floor']:.3f} |")
            ks = [r["K"] / 1024 for r in sel]
            fits.append((name, m, fit(ks, [r["us"] for r in sel]),
                         fit(ks, [r["floor_us"] for r in sel])))
    print()
    print("| run | M | fixed us | us per 1024 of K | floor fixed us | floor us per 1024 | slope ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, m, (a, b), (fa, fb) in fits:
        print(f"| {name} | {m} | {a:.2f} | {b:.4f} | {fa:.2f} | {fb:.4f} | {b / fb:.3f} |")


if __name__ == "__main__":
    main()
