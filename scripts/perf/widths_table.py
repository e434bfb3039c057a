#!/usr/bin/env python3
"""Table of a prefill token-width sweep (scripts/device_round.sh prefill-widths).

Arguments: bench JSON files (docs/BENCH.md). Rows of the decode (or auto) tier give the decode
column and cuBLAS; rows of the prefill tier are keyed by the width in their "launch" field.
For each prefill row the step time of one CTA is derived from the cost model's terms (config.h:
estimate_ns): time / (waves x k-blocks per split), waves of SMs x ctas_per_sm CTAs, so a sweep
refits step_ns(tokens) directly.
With --anchors FILE the best peer of that file (tinygemm, both Marlins, Machete, Swordfish) is
added, with the best Sailfish time as a ratio of it.
"""
import argparse
import json
import math
import re

from anchors import best_peers

SMS = 132


def launch_fields(text):
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", text or "")}


def ctas_per_sm(tokens):
    """src/prefill/config.h: ctas_per_sm."""
    return 2 if tokens <= 64 else 1


def step_ns(row, fields):
    tokens, splits = fields["tokens"], fields["splits"]
    n_tiles = math.ceil(row["N"] / 128)
    k_blocks = math.ceil(row["K"] / 64)
    units = n_tiles * math.ceil(row["M"] / tokens) * splits
    waves = math.ceil(units / (SMS * ctas_per_sm(tokens)))
    steps = math.ceil(k_blocks / splits)
    return row["us"] * 1000.0 / (waves * steps)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--anchors")
    args = parser.parse_args()

    decode, cublas, prefill = {}, {}, {}
    widths = set()
    for path in args.files:
        with open(path) as f:
            rows = json.load(f)["rows"]
        for r in rows:
            if r.get("status") != "ok" or r.get("us") is None:
                continue
            key = (r["shape"], r["M"])
            if r.get("cublas_us"):
                cublas[key] = r["cublas_us"]
            if r["tier"] == "prefill":
                fields = launch_fields(r.get("launch"))
                if "tokens" not in fields:
                    continue
                widths.add(fields["tokens"])
                prefill[key + (fields["tokens"],)] = (r["us"], fields["splits"],
                                                      step_ns(r, fields))
            else:
                decode[key] = r["us"]

    peers = best_peers(args.anchors) if args.anchors else {}

    widths = sorted(widths)
    keys = sorted(set(decode) | {k[:2] for k in prefill}, key=lambda k: (k[1], k[0]))
    head = ["shape", "M", "decode"] + [f"t{w} us (splits, step ns)" for w in widths]
    head += ["cuBLAS", "best", "x cuBLAS"]
    if peers:
        head += ["peer", "x peer"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key in keys:
        cells = [key[0], str(key[1])]
        candidates = []
        if key in decode:
            cells.append(f"{decode[key]:.2f}")
            candidates.append((decode[key], "decode"))
        else:
            cells.append("-")
        for w in widths:
            entry = prefill.get(key + (w,))
            if entry is None:
                cells.append("-")
                continue
            us, splits, step = entry
            cells.append(f"{us:.2f} ({splits}, {step:.0f})")
            candidates.append((us, f"t{w}"))
        best_us, best_name = min(candidates)
        cells.append(f"{cublas[key]:.2f}" if key in cublas else "-")
        cells.append(f"{best_name} {best_us:.2f}")
        cells.append(f"{cublas[key] / best_us:.2f}" if key in cublas else "-")
        if peers:
            peer = peers.get(key)
            cells += [f"{peer:.1f}" if peer else "-", f"{peer / best_us:.2f}" if peer else "-"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
