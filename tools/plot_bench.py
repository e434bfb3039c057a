#!/usr/bin/env python3
"""Plot a sailfish_bench JSON file (docs/BENCH.md, schema sailfish-bench/1).

    python3 tools/plot_bench.py results.json out.png

One row of two panels per shape: achieved TB/s against M and achieved TFLOP/s against M, for each
requested Sailfish tier and cuBLAS dense, with the roofline. Sailfish and cuBLAS divide the row's
problem bytes / flops by their own time (as the bench does), so those curves compare times of one
problem: higher is faster. The floor kernel streams the weight only, so its curve (TB/s panel) is
its own bandwidth, weight bytes / floor time: what a pure stream reaches when launched this way.
"""

import argparse
import json
import sys
from collections import OrderedDict

# The chosen tier is drawn as the marker, so an `auto` series shows where dispatch switches.
TIER_MARKERS = {"decode": "o", "prefill": "s", "dense": "^"}
SERIES_COLORS = ["tab:blue", "tab:orange", "tab:purple", "tab:brown", "tab:pink"]


def load(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    schema = data.get("schema", "")
    if not schema.startswith("sailfish-bench/"):
        raise ValueError(f"{path}: not a sailfish_bench result (schema {schema!r})")
    return data


def by_shape(rows):
    shapes = OrderedDict()
    for row in rows:
        shapes.setdefault(row["shape"], []).append(row)
    return shapes


def per_m(rows, key):
    """One value per M (baselines repeat on every tier row of an M): {M: row} where key is set."""
    out = OrderedDict()
    for row in sorted(rows, key=lambda r: r["M"]):
        if row.get(key) is not None and row["M"] not in out:
            out[row["M"]] = row
    return out


def plot_shape(ax_bw, ax_fl, name, rows, run):
    # The roofline's memory roof: the measured bandwidth unless the run overrode it.
    read_bw = run.get("roofline_read_bw_TBps") or run["read_bw_TBps"]
    peak = run["peak_TFLOPs"]
    tiers = list(OrderedDict.fromkeys(r["tier_requested"] for r in rows))
    for i, tier in enumerate(tiers):
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        series = [r for r in rows if r["tier_requested"] == tier and r.get("us") is not None]
        series.sort(key=lambda r: r["M"])
        if not series:
            continue
        ms = [r["M"] for r in series]
        bw = [r["bytes"] / r["us"] / 1e6 for r in series]
        fl = [r["flops"] / r["us"] / 1e6 for r in series]
        for ax, ys in ((ax_bw, bw), (ax_fl, fl)):
            ax.plot(ms, ys, "-", color=color, label=f"sailfish {tier}")
            for m, y, r in zip(ms, ys, series):
                ax.plot(m, y, TIER_MARKERS.get(r.get("tier"), "x"), color=color, ms=4)
                if r["status"] == "check_failed":
                    ax.plot(m, y, "x", color="red", ms=9, mew=2)

    cublas = per_m(rows, "cublas_us")
    if cublas:
        ms = list(cublas)
        ax_bw.plot(ms, [cublas[m]["bytes"] / cublas[m]["cublas_us"] / 1e6 for m in ms], "k-",
                   lw=1, label="cuBLAS dense")
        ax_fl.plot(ms, [cublas[m]["flops"] / cublas[m]["cublas_us"] / 1e6 for m in ms], "k-",
                   lw=1, label="cuBLAS dense")
    floor = per_m(rows, "floor_us")
    if floor:
        ms = list(floor)
        ax_bw.plot(ms, [floor[m]["weight_bytes"] / floor[m]["floor_us"] / 1e6 for m in ms], "g--",
                   lw=1, label="floor: weight bytes / floor time")

    roof = per_m(rows, "roofline_us")
    ms = list(roof)
    ax_bw.plot(ms, [roof[m]["bytes"] / roof[m]["roofline_us"] / 1e6 for m in ms], ":",
               color="gray", lw=2, label="roofline")
    ax_bw.axhline(read_bw, color="gray", lw=0.8, ls="-.", label=f"memory roof {read_bw:.2f} TB/s")
    ax_fl.plot(ms, [roof[m]["flops"] / roof[m]["roofline_us"] / 1e6 for m in ms], ":",
               color="gray", lw=2, label="roofline")
    ax_fl.axhline(peak, color="gray", lw=0.8, ls="-.", label=f"peak {peak:.0f} TFLOP/s")

    k, n = rows[0]["K"], rows[0]["N"]
    ax_bw.set_title(f"{name} (K={k}, N={n}): TB/s", fontsize=9)
    ax_fl.set_title(f"{name} (K={k}, N={n}): TFLOP/s", fontsize=9)
    for ax in (ax_bw, ax_fl):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("M (tokens)")
        ax.grid(True, which="both", alpha=0.3)
    ax_bw.set_ylabel("TB/s (problem bytes / time)")
    ax_bw.set_ylim(0, read_bw * 1.15)
    ax_fl.set_yscale("log")
    ax_fl.set_ylabel("TFLOP/s")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="JSON written by sailfish_bench --json")
    parser.add_argument("output", help="image to write (PNG, or any format matplotlib knows)")
    args = parser.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_bench.py needs matplotlib: python3 -m pip install matplotlib", file=sys.stderr)
        return 1
    try:
        data = load(args.results)
    except (OSError, ValueError) as e:
        print(f"plot_bench.py: {e}", file=sys.stderr)
        return 1

    run = data["run"]
    shapes = by_shape(data["rows"])
    if not shapes:
        print("plot_bench.py: the file has no rows", file=sys.stderr)
        return 1
    # Constrained layout makes room for the two-line title and the legends by itself.
    fig, axes = plt.subplots(len(shapes), 2, figsize=(13, 3.3 * len(shapes)), squeeze=False,
                             constrained_layout=True)
    for (name, rows), (ax_bw, ax_fl) in zip(shapes.items(), axes):
        plot_shape(ax_bw, ax_fl, name, rows, run)
    axes[0][1].legend(fontsize=7, loc="upper left")
    axes[0][0].legend(fontsize=7, loc="best")

    opts = run["options"]
    group = "channelwise" if opts["group_size"] == -1 else f"g{opts['group_size']}"
    extras = [x for x, on in (("zero points", opts["zero_points"]),
                              ("act-order", opts["act_order"]), ("bias", opts["bias"])) if on]
    fig.suptitle(f"sailfish_bench {run['git_revision']} on {run['device']['name']}, "
                 f"int{opts['bits']} {group} {opts['dtype']}"
                 f"{', ' + ', '.join(extras) if extras else ''}; read {run['read_bw_TBps']:.2f} "
                 f"TB/s; {run['timestamp_utc']}\nmarkers: o decode, s prefill, ^ dense; "
                 "red x: failed check", fontsize=10)
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
