#!/usr/bin/env python3
"""The tables of tune_harness_probe.sh: per bench JSON of a --tune --tune-recheck run, what
tune() timed and what the bench's harness timed for the same candidates, in one process.

Usage: tune_harness_summary.py JSON...   (markdown on stdout)
The first table has a line per row: the rule's time in each harness, each harness's fastest
candidate and its time over the rule's in the bench's harness, and the spread of bench / tune
over the candidates. The second lists the candidates whose two figures differ most.
"""
import argparse
import json
import os
import statistics


def tuned_rows(path):
    with open(path) as f:
        data = json.load(f)
    for r in data["rows"]:
        candidates = (r.get("tune") or {}).get("candidates", [])
        # One candidate is returned untimed (us 0): nothing to compare.
        if r.get("status") == "ok" and len(candidates) > 1 and "bench_us" in candidates[0]:
            yield r, candidates


def clocks(row, cands):
    """The row's SM clock and the range the rechecks read (older JSONs lack the latter)."""
    seen = [c["bench_sm_clock_mhz"] for c in cands if c.get("bench_sm_clock_mhz")]
    text = f"{row.get('sm_clock_mhz') or 0:.0f}"
    if seen:
        text += f", {min(seen):.0f}-{max(seen):.0f}"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json", nargs="+")
    args = parser.parse_args()
    outliers = []
    print("| run | rule: tune us, bench us | tune's pick (bench / rule) | bench's pick "
          "(bench / rule) | bench / tune: min, median, max | SM MHz: row, rechecks |")
    print("|---|---|---|---|---|---|")
    for path in args.json:
        name = os.path.basename(path)[:-5]
        for row, cands in tuned_rows(path):
            run = f"{name} {row['shape']} M={row['M']}"
            rule = cands[0]
            chosen = cands[row["tune"]["chosen"]]
            best = min(cands, key=lambda c: c["bench_us"])
            ratios = [c["bench_us"] / c["us"] for c in cands]
            print(f"| {run} | {rule['us']:.2f}, {rule['bench_us']:.2f} | {chosen['label']} "
                  f"({chosen['bench_us'] / rule['bench_us']:.3f}) | {best['label']} "
                  f"({best['bench_us'] / rule['bench_us']:.3f}) | {min(ratios):.3f}, "
                  f"{statistics.median(ratios):.3f}, {max(ratios):.3f} | {clocks(row, cands)} |")
            mid = statistics.median(ratios)
            for c, ratio in zip(cands, ratios):
                outliers.append((abs(ratio / mid - 1.0), run, c, ratio))
    print()
    print("| run | candidate | launch | tune us | bench us | bench / tune |")
    print("|---|---|---|---|---|---|")
    for _, run, c, ratio in sorted(outliers, key=lambda o: -o[0])[:16]:
        print(f"| {run} | {c['label']} | {c['launch']} | {c['us']:.2f} | {c['bench_us']:.2f} | "
              f"{ratio:.3f} |")


if __name__ == "__main__":
    main()
