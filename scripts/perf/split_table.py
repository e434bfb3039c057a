#!/usr/bin/env python3
"""Split-depth sweep as one table: per (shape, M), the auto run and every forced depth.

Usage: split_table.py AUTO_JSON SWEEP_JSON [SWEEP_JSON ...]   (a markdown table on stdout)
       split_table.py SWEEP_SET_JSON   (docs/perf/data/decode_v11_split_sweep*.json: the same
                                        bench JSONs under "runs", the heuristic's as split_auto)
Sweep files are bench JSONs of forced depths (SAILFISH_DECODE_SPLITS; scripts/device_round.sh
decode-split-sweep). Each cell is the time in us and the epilogue (e3 cluster, e2 reduce kernel,
e0 one split); where two files forced the same depth with different epilogues, both are shown.
The last columns name the fastest forced launch and auto's time over it.
"""
import argparse
import json
import re


def ok_rows(data):
    return [r for r in data["rows"] if r.get("status") == "ok"]


def load(path):
    with open(path) as f:
        return json.load(f)


def launch_fields(row):
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", row.get("launch") or "")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("auto", help="the heuristic's bench JSON, or a sweep set")
    parser.add_argument("sweeps", nargs="*", help="bench JSONs of forced depths")
    args = parser.parse_args()
    first = load(args.auto)
    if "runs" in first:
        runs = dict(first["runs"])
        auto_data = runs.pop("split_auto")
        sweeps = list(runs.values())
    else:
        auto_data, sweeps = first, [load(path) for path in args.sweeps]
    auto = {(r["shape"], r["M"]): r for r in ok_rows(auto_data)}
    forced = {}  # (shape, M) -> {(splits, epilogue): us}
    for data in sweeps:
        for r in ok_rows(data):
            f = launch_fields(r)
            cell = (f.get("splits"), f.get("epilogue"))
            forced.setdefault((r["shape"], r["M"]), {})[cell] = r["us"]
    depths = sorted({s for cells in forced.values() for s, _ in cells})
    header = ["shape", "M", "auto"] + [f"s{s}" for s in depths] + ["best forced", "auto / best"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * (len(depths) + 5))
    for key in sorted(set(auto) | set(forced), key=lambda k: (k[1], k[0])):
        a = auto.get(key)
        af = launch_fields(a) if a else {}
        cells = [key[0], str(key[1]),
                 f"{a['us']:.2f} s{af.get('splits')}/e{af.get('epilogue')}" if a else "-"]
        runs = forced.get(key, {})
        for s in depths:
            here = sorted((e, us) for (d, e), us in runs.items() if d == s)
            cells.append(" ".join(f"{us:.2f}/e{e}" for e, us in here) or "-")
        if runs:
            (s, e), us = min(runs.items(), key=lambda kv: kv[1])
            cells += [f"s{s}/e{e} {us:.2f}", f"{a['us'] / us:.3f}" if a else "-"]
        else:
            cells += ["-", "-"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
