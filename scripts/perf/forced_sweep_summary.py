#!/usr/bin/env python3
"""Tables of a forced split-depth and stage-count sweep run by scripts/device_variant_rounds.sh
with run-time variants sNwK (SAILFISH_DECODE_SPLITS=N, SAILFISH_DECODE_WARP_STAGES=K) beside the
plan (auto), as docs/perf/data/decode_v42d_spec.txt:

  python3 scripts/perf/forced_sweep_summary.py OUT_DIR LABEL[:DEEP] ...

Per label, each row's fastest forced variant against the plan (means over the rounds); with
:DEEP, also the deep count against four stages at each forced depth, so a stage rule can be read
apart from the split heuristic.
"""
import collections
import glob
import json
import sys

from compare_runs import short_launch


def load(out_dir, label):
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    launch = {}
    for path in glob.glob(f"{out_dir}/{label}_*_*.json"):
        variant = path.split("/")[-1][len(label) + 1:].rsplit("_", 1)[0]
        for row in json.load(open(path))["rows"]:
            if row.get("status") != "ok":
                continue
            key = (row["shape"], row["M"])
            times[key][variant].append(row["us"])
            launch[(key, variant)] = short_launch(row["launch"])
    means = {k: {v: sum(t) / len(t) for v, t in per.items()} for k, per in times.items()}
    return means, launch


def main():
    out_dir = sys.argv[1]
    for item in sys.argv[2:]:
        label, _, deep = item.partition(":")
        means, launch = load(out_dir, label)
        print(f"\n{label}: the fastest forced variant against the plan\n")
        print("| shape | M | auto us | auto launch | best | best us | best launch | best/auto |")
        print("|---|---|---|---|---|---|---|---|")
        for key in sorted(means, key=lambda k: (k[1], k[0])):
            m = means[key]
            if "auto" not in m:
                continue
            best = min((v for v in m if v != "auto"), key=lambda v: m[v])
            print(f"| {key[0]} | {key[1]} | {m['auto']:.2f} | {launch[(key, 'auto')]} | {best} | "
                  f"{m[best]:.2f} | {launch[(key, best)]} | {m[best] / m['auto']:.3f} |")
        if not deep:
            continue
        print(f"\n{label}: w{deep}/w4 at each forced depth (the w{deep} launch)\n")
        print("| shape | M | auto launch | " + " | ".join(f"s{s}" for s in range(1, 9)) + " |")
        print("|---|---|---|" + "---|" * 8)
        for key in sorted(means, key=lambda k: (k[1], k[0])):
            m = means[key]
            cells = []
            for s in range(1, 9):
                four, deeper = f"s{s}w4", f"s{s}w{deep}"
                cells.append(f"{m[deeper] / m[four]:.3f} ({launch[(key, deeper)]})"
                             if four in m and deeper in m else "-")
            print(f"| {key[0]} | {key[1]} | {launch.get((key, 'auto'), '-')} | " +
                  " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
