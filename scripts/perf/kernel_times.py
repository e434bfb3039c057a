#!/usr/bin/env python3
"""Parse an Nsight Compute CSV (--metrics gpu__time_duration.sum --csv --print-units base) and
print one markdown row per kernel name: the case label, the kernel, its launches and the last
launch's time in microseconds (scripts/perf/kernel_times.sh)."""
import csv
import re
import sys


def main():
    label, path = sys.argv[1], sys.argv[2]
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        print(f"| {label} | (no ncu rows; see {path}) | | |")
        return
    last, count = {}, {}
    for row in csv.DictReader(lines[start:]):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = re.sub(r"\(.*", "", row["Kernel Name"]).split("<")[0].split("::")[-1]
        grid = row.get("Grid Size", "")
        key = f"{name} {grid}"
        last[key] = float(row["Metric Value"].replace(",", "")) / 1000.0  # ns -> us
        count[key] = count.get(key, 0) + 1
    for key, us in last.items():
        print(f"| {label} | {key} | {count[key]} | {us:.2f} |")


if __name__ == "__main__":
    main()
