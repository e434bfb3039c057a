"""Mean old and new time per bench row over the rounds of scripts/device_ab.sh, and their ratio.

  python3 scripts/perf/ab_summary.py OUT_DIR LABEL [LABEL ...]

Reads OUT_DIR/ab_<label>_<old|new>_<round>.json; prints one markdown table per label: shape, M,
each side's launch and mean microseconds over the rounds, new/old, and the new side's time
against its stream-only floor.
"""
import glob
import json
import sys

from compare_runs import short_launch


def rows_by_key(paths):
    out = {}
    for path in paths:
        for row in json.load(open(path))["rows"]:
            if row.get("status") != "ok":
                continue
            out.setdefault((row["shape"], row["M"]), []).append(row)
    return out


def main():
    out_dir, labels = sys.argv[1], sys.argv[2:]
    for label in labels:
        sides = {side: rows_by_key(sorted(glob.glob(f"{out_dir}/ab_{label}_{side}_*.json")))
                 for side in ("old", "new")}
        print(f"\n{label}\n")
        print("| shape | M | old launch | old us | new launch | new us | new/old | new x floor |")
        print("|---|---|---|---|---|---|---|---|")
        for key in sorted(sides["new"], key=lambda k: (k[1], k[0])):
            old, new = sides["old"].get(key), sides["new"][key]
            if not old:
                continue
            mean = lambda rs, f: sum(r[f] for r in rs) / len(rs)
            o, n = mean(old, "us"), mean(new, "us")
            floor = mean(new, "floor_us")
            print(f"| {key[0]} | {key[1]} | {short_launch(old[0]['launch'])} | {o:.2f} | "
                  f"{short_launch(new[0]['launch'])} | {n:.2f} | {n / o:.3f} | {n / floor:.2f} |")


if __name__ == "__main__":
    main()
