#!/usr/bin/env python3
"""Tables of scripts/device_variant_rounds.sh: per spec line, each variant's mean time per row over
the rounds and its ratio to the line's first variant, with the geometric mean of the ratios.

  python3 scripts/perf/variant_summary.py OUT_DIR SPEC_FILE

Reads OUT_DIR/<label>_<variant>_<round>.json. Rows that failed their check or did not run are
left out and counted under the table.
"""
import glob
import json
import math
import sys

from ab_summary import rows_by_key
from compare_runs import short_launch


def rows_not_ok(paths):
    return sum(row.get("status") != "ok" for path in paths for row in json.load(open(path))["rows"])


def spec_lines(path):
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        label, variants, _ = line.split("|", 2)
        yield label, variants.split(",")


def main():
    out_dir, spec = sys.argv[1], sys.argv[2]
    for label, variants in spec_lines(spec):
        sides = {}
        for name in variants:
            paths = sorted(glob.glob(f"{out_dir}/{label}_{name}_*.json"))
            sides[name] = rows_by_key(paths), rows_not_ok(paths)
        ref, others = variants[0], variants[1:]
        ref_rows, ref_bad = sides[ref]
        print(f"\n{label} (reference {ref})\n")
        head = f"| shape | M | {ref} launch | {ref} us |"
        head += "".join(f" {n} us | {n}/{ref} |" for n in others) + f" {ref} x floor |"
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        logs = {n: [] for n in others}
        mean = lambda rs, f: sum(r[f] for r in rs) / len(rs)
        for key in sorted(ref_rows, key=lambda k: (k[1], k[0])):
            r = mean(ref_rows[key], "us")
            cells = ""
            for n in others:
                rows = sides[n][0].get(key)
                if not rows:
                    cells += " - | - |"
                    continue
                v = mean(rows, "us")
                logs[n].append(math.log(v / r))
                cells += f" {v:.2f} | {v / r:.3f} |"
            floor = mean(ref_rows[key], "floor_us") if ref_rows[key][0].get("floor_us") else 0
            floor_cell = f"{r / floor:.2f}" if floor else "-"
            print(f"| {key[0]} | {key[1]} | {short_launch(ref_rows[key][0]['launch'])} | "
                  f"{r:.2f} |{cells} {floor_cell} |")
        for n in others:
            if logs[n]:
                g = math.exp(sum(logs[n]) / len(logs[n]))
                print(f"\n{label}: {n}/{ref} geometric mean {g:.3f} over {len(logs[n])} rows "
                      f"(range {math.exp(min(logs[n])):.3f}-{math.exp(max(logs[n])):.3f}); "
                      f"rows not ok: {ref} {ref_bad}, {n} {sides[n][1]}")


if __name__ == "__main__":
    main()
