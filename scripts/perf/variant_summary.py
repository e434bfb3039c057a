#!/usr/bin/env python3
"""Tables of scripts/device_variant_rounds.sh: per spec line, each variant's mean time per row over
the rounds and its ratio to the line's first variant, with the geometric mean of the ratios.

  python3 scripts/perf/variant_summary.py OUT_DIR_OR_ARCHIVE SPEC_FILE [--launches]

Reads <label>_<variant>_<round>.json from OUT_DIR, or from the .tar.xz the rounds script packs
them into. Rows that failed their check or did not run are left out and counted under the table.
--launches adds, under each table, every variant's launch string per row (a forced variant's plan
is not the reference's).
"""
import argparse
import contextlib
import glob
import json
import math
import os
import sys
import tarfile
import tempfile

from ab_summary import rows_by_key
from compare_runs import short_launch


def rows_not_ok(paths):
    return sum(row.get("status") != "ok" for path in paths for row in json.load(open(path))["rows"])


def spec_lines(path):
    """(label, variants, bench arguments) of each line of a variant spec."""
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        label, variants, bench_args = line.split("|", 2)
        yield label, variants.split(","), bench_args


def print_launches(label, variants, sides):
    """Each variant's launch string per row of the reference (its first round's)."""
    ref_rows = sides[variants[0]][0]
    print(f"\n{label}: launches\n")
    head = "| shape | M |" + "".join(f" {n} |" for n in variants)
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for key in sorted(ref_rows, key=lambda k: (k[1], k[0])):
        cells = ""
        for n in variants:
            rows = sides[n][0].get(key)
            cells += f" {short_launch(rows[0]['launch'])} |" if rows else " - |"
        print(f"| {key[0]} | {key[1]} |{cells}")


@contextlib.contextmanager
def rounds_folder(path):
    """The rounds' folder: `path` itself, or a temporary folder `path` (a .tar.xz) unpacks into."""
    if not (os.path.isfile(path) and tarfile.is_tarfile(path)):
        yield path
        return
    with tempfile.TemporaryDirectory() as unpacked:
        with tarfile.open(path) as archive:
            # The "data" filter (no links out, no absolute paths) where this Python has it.
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            archive.extractall(unpacked, **safe)
        yield unpacked


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="the rounds' output folder, or the .tar.xz they were packed in")
    parser.add_argument("spec")
    parser.add_argument("--launches", action="store_true")
    args = parser.parse_args()
    with rounds_folder(args.out) as out_dir:
        summarize(out_dir, args.spec, args.launches)


def summarize(out_dir, spec, launches):
    for label, variants, _ in spec_lines(spec):
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
        if launches:
            print_launches(label, variants, sides)


if __name__ == "__main__":
    main()
