#!/usr/bin/env python3
"""SASS check: the decode warp-split main loops at 3-4 token tiles read full tiles without selects.

Every token tile of a warp-split CTA but the last is full (config.h: only_last_token_tile_partial),
so since v23 the kernel reads those tiles' activation rows with ldmatrix at tile 0's row address
plus a constant (tile t at + 1 KB * t, ldmatrix_x4_at) instead of an add and a select against the
zero chunk per tile and slice pair. That took 25 of 459 instructions out of the 4-tile loop
(docs/perf/decode.md, v23: 0.94-0.98x the time at M = 20-32). The results stay right either way,
so only the SASS shows a change that loses it. Checked here: in every main loop (the innermost
backward branch with at least 16 HMMA per token tile) of the 3- and 4-tile instances, the LDSM
with the offsets +0x400 (tile 1) and +0x800 (tile 2) number 2 * (tiles - 2): one per full tile
past tile 0 and slice pair. At 2 tiles tile 0 sits at offset 0 and tile 1 is the last, so there
is nothing to see.

Usage: check_decode_full_tiles.py --lib libsailfish.a [--cuobjdump PATH]
"""
import re
import sys

from sass_tools import (decode_warp_split_instances, instructions, library_sass, main_loops,
                        opcode, report)

kTileOffset = re.compile(r"\+0x(400|800)\]")


def main():
    lib, sass = library_sass()
    checked, failures = 0, []
    for body, dtype, bits, tiles, zero, _, _ in decode_warp_split_instances(sass):
        if tiles < 3:
            continue
        checked += 1
        label = f"{dtype} int{bits} tiles={tiles} zero_points={zero}"
        insts = instructions(body)
        found = [[t for _, t in insts[f:l + 1]] for f, l in main_loops(insts, 16 * tiles)]
        if not found:
            failures.append(f"{label}: no main loop with {16 * tiles} HMMA found")
            continue
        expected = 2 * (tiles - 2)
        counts = [sum(1 for t in texts if opcode(t) == "LDSM" and kTileOffset.search(t))
                  for texts in found]
        summary = f"{label}: {len(found)} main loops, LDSM at a tile offset {counts}"
        if any(c != expected for c in counts):
            failures.append(summary + f" (expected {expected} each: a select per tile again?)")
        else:
            print("ok  ", summary)
    return report(checked, failures, f"no 3-4 tile decode_warp_split_kernel in {lib}",
                  "warp-split instances at 3-4 token tiles read full tiles at constant offsets")


if __name__ == "__main__":
    sys.exit(main())
