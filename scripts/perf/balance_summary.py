#!/usr/bin/env python3
"""Table of balance_probe.sh's rows: time, floor, time over floor and the launch, per shape and M.

usage: balance_summary.py DIR   (the probe's $OUT: balance_*.json)
"""
import glob
import json
import os
import sys

from compare_runs import short_launch


def main():
    print("| file | shape | K x N | M | strips | us | floor us | x floor | ns a strip | launch |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "balance_*.json"))):
        with open(path) as f:
            rows = json.load(f)["rows"]
        for r in rows:
            if r.get("status") != "ok":
                print(f"| {os.path.basename(path)} | {r['shape']} | | {r['M']} | | {r['status']} |")
                continue
            strips = r["N"] // 64
            print(f"| {os.path.basename(path)[8:-5]} | {r['shape']} | {r['K']} x {r['N']} | {r['M']} "
                  f"| {strips} | {r['us']:.2f} | {r['floor_us']:.2f} | {r['ratio_to_floor']:.3f} "
                  f"| {1000 * r['us'] / strips:.1f} | {short_launch(r['launch'])} |")


if __name__ == "__main__":
    main()
