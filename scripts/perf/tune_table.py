#!/usr/bin/env python3
"""Measured planning against the rules: per (shape, M), the rule's run and the tuned run.

Usage: tune_table.py AUTO_JSON TUNED_JSON   (bench JSONs of the same rows, the second run with
                                             --tune; a markdown table on stdout)
Each row gives both times, tuned / auto, both launches, and the candidate tune() chose with its
time and the rule's within the tuning (from the tuned row's reason), and what the tuning took
(wall ms of the tune() call, where the bench recorded it). Where the tuned run rechecked every
candidate in the bench's harness (--tune-recheck), a last column gives the candidate that ran
fastest there, its time over the rule's in that harness, and whether tune() chose it. A last
line sums it up.
"""
import argparse
import json
import re


def rows(path):
    with open(path) as f:
        data = json.load(f)
    return {(r["shape"], r["M"]): r for r in data["rows"] if r.get("status") == "ok"}


def short_launch(row):
    fields = dict(re.findall(r"(\w+)=(\d+)", row.get("launch") or ""))
    if row.get("tier") == "decode":
        text = f"s{fields.get('splits', '?')}/e{fields.get('epilogue', '?')}"
        if "warp_stages" in fields:
            text += f"/w{fields['warp_stages']}"
        return text
    if row.get("tier") == "prefill":
        return f"t{fields.get('tokens', '?')}/s{fields.get('splits', '?')}"
    return row.get("tier", "?")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("auto")
    parser.add_argument("tuned")
    args = parser.parse_args()
    auto, tuned = rows(args.auto), rows(args.tuned)
    print("| shape | M | auto us | auto launch | tuned us | tuned launch | tuned / auto "
          "| chosen (tuning's us, rule's us) | tune ms | bench's fastest (/ rule) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios, tune_ms, agreed, rechecked = [], [], 0, 0
    for key in sorted(auto, key=lambda k: (k[1], k[0])):
        if key not in tuned:
            continue
        a, t = auto[key], tuned[key]
        ratio = t["us"] / a["us"]
        ratios.append(ratio)
        m = re.match(r"tuned: (.*?) ([\d.]+) us of (\d+) candidates \(rule ([\d.]+) us", t.get(
            "reason", ""))
        chosen = "untimed"
        if m:
            chosen = (f"{m.group(1)} ({float(m.group(2)):.2f}, {float(m.group(4)):.2f}) "
                      f"of {m.group(3)}")
        ms = (t.get("tune") or {}).get("ms")
        if ms is not None:
            tune_ms.append(ms)
        ms_text = f"{ms:.0f}" if ms is not None else "-"
        recheck = "-"
        candidates = (t.get("tune") or {}).get("candidates", [])
        if len(candidates) > 1 and all("bench_us" in c for c in candidates):
            best = min(range(len(candidates)), key=lambda i: candidates[i]["bench_us"])
            rechecked += 1
            same = best == t["tune"]["chosen"]
            agreed += same
            recheck = (f"{candidates[best]['label']} "
                       f"({candidates[best]['bench_us'] / candidates[0]['bench_us']:.3f})"
                       f"{'' if same else ', not chosen'}")
        print(f"| {key[0]} | {key[1]} | {a['us']:.2f} | {short_launch(a)} | {t['us']:.2f} | "
              f"{short_launch(t)} | {ratio:.3f} | {chosen} | {ms_text} | {recheck} |")
    if ratios:
        changed = [r for r in ratios if abs(r - 1) > 0.02]
        print(f"\n{len(ratios)} rows: tuned / auto {min(ratios):.3f}-{max(ratios):.3f}; "
              f"{len(changed)} rows beyond 2%")
    if rechecked:
        print(f"tune() chose the bench harness's fastest candidate on {agreed} of {rechecked} "
              f"rows")
    if tune_ms:
        print(f"tune() took {min(tune_ms):.0f}-{max(tune_ms):.0f} ms a row, "
              f"{sum(tune_ms) / 1e3:.1f} s in all")


if __name__ == "__main__":
    main()
