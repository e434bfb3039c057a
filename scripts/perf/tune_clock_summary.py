#!/usr/bin/env python3
"""tune()'s SM clock guard, off against on: per (shape, M), two --tune --tune-recheck runs.

Usage: tune_clock_summary.py OFF_JSON ON_JSON   (bench JSONs of the same rows: the first run with
                                                 --tune-clock-drop 0, the second with the guard)
For each run and row: the wall time of the tune() call, the blocks timed again (on only), the
lowest SM clock tune() read after a kept block (on only), the recheck clocks' range, the range of
tune()'s time over the bench's for each candidate (how far the tuning's figures can be trusted),
and the regret: the bench's time of the candidate tune() chose over the bench's fastest
candidate, both rechecked in the bench's harness (1.000: tune() chose the fastest). A last line
sums up each run.
"""
import argparse
import json


def rows(path):
    with open(path) as f:
        data = json.load(f)
    return {(r["shape"], r["M"]): r for r in data["rows"]
            if r.get("status") == "ok" and len((r.get("tune") or {}).get("candidates", [])) > 1}


def facts(row):
    tune = row["tune"]
    cands = tune["candidates"]
    bench = [c.get("bench_us") for c in cands]
    regret = None
    if all(b is not None for b in bench):
        regret = bench[tune["chosen"]] / min(bench)
    clocks = [c["bench_sm_clock_mhz"] for c in cands if "bench_sm_clock_mhz" in c]
    kept = [c.get("sm_clock_mhz", 0) for c in cands if c.get("sm_clock_mhz", 0) > 0]
    agreement = [c["us"] / c["bench_us"] for c in cands if c.get("bench_us")]
    return {
        "agreement": agreement,
        "ms": tune["ms"],
        "retimes": sum(c.get("retimes", 0) for c in cands),
        "tune_clock": min(kept) if kept else None,
        "recheck": (min(clocks), max(clocks)) if clocks else None,
        "regret": regret,
        "chosen": cands[tune["chosen"]]["label"],
    }


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("off")
    parser.add_argument("on")
    args = parser.parse_args()
    off, on = rows(args.off), rows(args.on)
    print("| shape | M | off: chosen | off: regret | off: tune ms | off: tune / bench | on: chosen "
          "| on: regret | on: tune ms | on: tune / bench | on: blocks retimed | on: lowest kept MHz "
          "| recheck MHz off / on |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    totals = {"off": [], "on": []}
    for key in sorted(set(off) & set(on), key=lambda k: (k[1], k[0])):
        a, b = facts(off[key]), facts(on[key])
        totals["off"].append(a)
        totals["on"].append(b)
        span = lambda f: "-" if f["recheck"] is None else f"{f['recheck'][0]:.0f}-{f['recheck'][1]:.0f}"
        agree = lambda f: "-" if not f["agreement"] else (f"{min(f['agreement']):.3f}-"
                                                         f"{max(f['agreement']):.3f}")
        print(f"| {key[0]} | {key[1]} | {a['chosen']} | {fmt(a['regret'], '.3f')} | "
              f"{a['ms']:.0f} | {agree(a)} | {b['chosen']} | {fmt(b['regret'], '.3f')} | "
              f"{b['ms']:.0f} | {agree(b)} | {b['retimes']} | {fmt(b['tune_clock'], '.0f')} | "
              f"{span(a)} / {span(b)} |")
    for name, fs in totals.items():
        regrets = [f["regret"] for f in fs if f["regret"] is not None]
        if not regrets:
            continue
        fastest = sum(1 for r in regrets if r <= 1.0)
        within = sum(1 for r in regrets if r <= 1.02)
        agreement = [x for f in fs for x in f["agreement"]]
        close = sum(1 for x in agreement if abs(x - 1) <= 0.03)
        print(f"\n{name}: {len(regrets)} rows; chose the bench's fastest on {fastest}, within 2% "
              f"of it on {within}; worst regret {max(regrets):.3f}; tune ms "
              f"{min(f['ms'] for f in fs):.0f}-{max(f['ms'] for f in fs):.0f}; blocks retimed "
              f"{sum(f['retimes'] for f in fs)}; tune / bench {min(agreement):.3f}-"
              f"{max(agreement):.3f}, within 3% on {close} of {len(agreement)} candidates")


if __name__ == "__main__":
    main()
