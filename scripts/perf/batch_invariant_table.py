#!/usr/bin/env python3
"""The batch-invariant cost table of docs/perf/prefill.md.

Two sailfish_bench JSON files of the same shapes and M, run with SAILFISH_BATCH_INVARIANT=0 and
then 1: one row a (shape, M), the invariant plan's time over the default plan's, cuBLAS beside.
  batch_invariant_table.py DEFAULT.json INVARIANT.json
"""
import json
import sys


def rows_by_shape_and_m(path):
    with open(path) as f:
        return {(r["shape"], r["M"]): r for r in json.load(f)["rows"]}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    default = rows_by_shape_and_m(sys.argv[1])
    invariant = rows_by_shape_and_m(sys.argv[2])
    print("| shape | M | default µs (tier) | invariant µs | × default | cuBLAS µs | invariant launch |")
    print("|---|---|---|---|---|---|---|")
    for key, d in default.items():
        i = invariant.get(key)
        if i is None:
            continue
        print(f"| {key[0]} | {key[1]} | {d['us']:.2f} ({d['tier']}) | {i['us']:.2f} | "
              f"{i['us'] / d['us']:.2f} | {d['cublas_us']:.2f} | {i['launch']} |")


if __name__ == "__main__":
    main()
