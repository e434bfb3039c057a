#!/usr/bin/env python3
"""A split-depth probe's rows (scripts/device_variant_rounds.sh), each variant's plan beside its
time, with the counts a depth rule could order the variants by, and how well each count does.

  python3 scripts/perf/depth_table.py OUT_DIR_OR_ARCHIVE SPEC_FILE [--sms 132]

Per spec line and bench row, the variants fastest first: mean time over the rounds, its ratio to
the fastest, the plan (splits, stages a warp, warps a CTA, padding) and these counts, all of the
warp-split grid (Stream-K rows are left out):
  - CTAs: strips x CTAs along M x splits; share: ceil(CTAs / SMs), the busiest SM's CTAs where the
    grid lands evenly; resident: the CTAs an SM can hold (the plan's occupancy, launch field
    `resident=`, absent before stop 49). Unpadded, programmatic dependent launch and clusters can
    stack up to `resident` CTAs on an SM (docs/perf/decode.md, v46), so the busiest SM holds
    `share` if the plan is padded (spread=) or holds no more than that anyway, else
    share..min(resident, CTAs);
  - blocks a warp: ceil(k-blocks / splits / warps), the chain each warp walks;
  - SM blocks: the busiest SM's CTAs x k-blocks a CTA, the bytes it streams in 2 KB blocks (int4);
  - in flight: the busiest SM's CTAs x the shared memory a CTA keeps in its stages (stages - 1 of
    them), in KB.
Under each table: each count's Spearman rank correlation with the time over that row's variants,
and under each line the mean over its rows (+1: the larger the count, the slower, in the times'
order; -1: the larger, the faster).
"""
import argparse
import glob
import math
import re
import sys

from ab_summary import rows_by_key
from variant_summary import rounds_folder, spec_lines


def launch_fields(text):
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", text or "")}


def counts(row, sms):
    """The plan's fields and counts for one bench row, or None for a Stream-K or strip plan."""
    f = launch_fields(row["launch"])
    if not row["launch"].startswith("warp_split") or f.get("stream_k_strips"):
        return None
    splits, stages, warps = f["splits"], f["warp_stages"], f.get("warps", 4)
    k_blocks = -(-row["K"] // 64)
    ctas = -(-row["N"] // 64) * f["m_groups"] * splits
    share = -(-ctas // sms)
    resident = f.get("resident")
    padded = f.get("spread", 0) > 0
    busiest_hi = share if padded or resident is None else max(share, min(resident, ctas))
    cta_blocks = -(-k_blocks // splits)
    c = {"splits": splits, "stages": stages, "warps": warps, "ctas": ctas, "share": share,
         "resident": resident, "padded": padded, "busiest": (share, busiest_hi),
         "warp_blocks": -(-cta_blocks // warps), "sm_blocks": (share * cta_blocks,
                                                              busiest_hi * cta_blocks)}
    shared = f.get("shared")
    if shared is not None and resident is not None:
        kept = shared * (stages - 1) / stages / 1024
        c["in_flight"] = (share * kept, busiest_hi * kept)
    return c


def span(pair, fmt="{:.0f}"):
    lo, hi = pair
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}-{fmt.format(hi)}"


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):  # ties share their mean rank
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for n in range(i, j + 1):
            out[order[n]] = (i + j) / 2
        i = j + 1
    return out


def spearman(xs, ys):
    """Rank correlation of xs and ys, or None where either is constant or too short."""
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


# The counts correlated with the time: name, and the value of a variant's counts (None: unknown).
PREDICTORS = (
    ("SM blocks (even)", lambda c: c["sm_blocks"][0]),
    ("SM blocks (stacked)", lambda c: c["sm_blocks"][1] if c["resident"] is not None else None),
    ("blocks a warp", lambda c: c["warp_blocks"]),
    ("in flight (even)", lambda c: c["in_flight"][0] if "in_flight" in c else None),
    ("splits", lambda c: c["splits"]),
)


def row_table(key, variants, sms):
    """Prints one row's table; returns {predictor: correlation} for those it could compute."""
    shown = []
    for name, rows in variants.items():
        c = counts(rows[0], sms)
        if c is not None:
            shown.append((sum(r["us"] for r in rows) / len(rows), name, rows[0], c))
    if not shown:
        return {}
    shown.sort(key=lambda v: v[0])
    fastest = shown[0][0]
    print(f"\n{key[0]}, M = {key[1]} (K {shown[0][2]['K']}, N {shown[0][2]['N']})\n")
    print("| variant | us | x fastest | splits | stages | warps | padded | CTAs | share | "
          "resident | busiest SM | blocks a warp | SM blocks | in flight KB |")
    print("|" + "---|" * 14)
    for us, name, _, c in shown:
        resident = "-" if c["resident"] is None else str(c["resident"])
        flight = span(c["in_flight"]) if "in_flight" in c else "-"
        print(f"| {name} | {us:.2f} | {us / fastest:.3f} | {c['splits']} | {c['stages']} | "
              f"{c['warps']} | {'yes' if c['padded'] else 'no'} | {c['ctas']} | {c['share']} | "
              f"{resident} | {span(c['busiest'])} | {c['warp_blocks']} | {span(c['sm_blocks'])} | "
              f"{flight} |")
    out = {}
    for label, value in PREDICTORS:
        pairs = [(value(c), us) for us, _, _, c in shown if value(c) is not None]
        rho = spearman([p[0] for p in pairs], [p[1] for p in pairs])
        if rho is not None:
            out[label] = rho
    if out:
        print("\nrank correlation with the time: " +
              ", ".join(f"{k} {v:+.2f}" for k, v in out.items()))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="the rounds' output folder, or the .tar.xz they were packed in")
    parser.add_argument("spec")
    parser.add_argument("--sms", type=int, default=132, help="SMs of the device (H200: 132)")
    args = parser.parse_args()
    with rounds_folder(args.out) as out_dir:
        for label, variants, _ in spec_lines(args.spec):
            by_variant = {n: rows_by_key(sorted(glob.glob(f"{out_dir}/{label}_{n}_*.json")))
                          for n in variants}
            keys = sorted({k for rows in by_variant.values() for k in rows},
                          key=lambda k: (k[1], k[0]))
            if not keys:
                print(f"{label}: no rounds in {args.out}", file=sys.stderr)
                return 1
            print(f"\n## {label}")
            totals = {}
            for key in keys:
                row_vars = {n: rows[key] for n, rows in by_variant.items() if key in rows}
                for k, v in row_table(key, row_vars, args.sms).items():
                    totals.setdefault(k, []).append(v)
            print(f"\n{label}: mean rank correlation over rows: " +
                  ", ".join(f"{k} {sum(v) / len(v):+.2f} ({len(v)} rows)"
                            for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
