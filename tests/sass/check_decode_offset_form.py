#!/usr/bin/env python3
"""SASS check: the decode warp-split main loops at 1-2 token tiles convert weights in the offset form.

At 1-2 token tiles (M <= 16 a CTA) the warp-split kernel is bound by its instruction stream
(docs/perf/decode.md), and the offset forms (src/common/dequant.cuh) keep the conversion at its
minimum: no per-pair scale or subtraction, the scales and zero points applied to fp32 sums once per
group. Two properties a source change can lose without any test failing, since the results stay
right:
  - no HFMA2 in the main loop, for symmetric and zero-point weights alike (zero points went through
    a per-pair scale-and-fold hfma2 before v15, 1.06-1.18x the time at M = 1);
  - fp16 int4: one shift per packed word (the 0x5400 form for the k 8-15 nibbles, v16), so at most
    kMaxHalfInt4Shifts SHF in a loop that converts 16 words (bf16 needs three a word: 48);
  - bf16 int8: one shift per packed word (each byte's seven low bits and top bit, v55), so at most
    kMaxBf16Int8Shifts SHF in a loop that converts 32 words (the nibble split before it took
    three a word: 122 in all).
The main loops are the innermost backward branches whose bodies hold at least 16 HMMA per token
tile (a block: 4 n16 groups x 4 k16 slices); none may hold an HFMA2. The smallest of them is the
loop for groups of 64 or more, where the shift count is checked (the loop for groups of 16 and 32
also computes each slice's scale row).

Usage: check_decode_offset_form.py --lib libsailfish.a [--cuobjdump PATH]
"""
import sys

from sass_tools import (decode_warp_split_instances, instructions, library_sass, main_loops,
                        opcode, report)

kMaxHalfInt4Shifts = 24  # 16 words plus cursor and index arithmetic (18 at v16)
kMaxBf16Int8Shifts = 48  # 32 words plus cursor and index arithmetic (42 at v55)


def main():
    lib, sass = library_sass()
    checked, failures = 0, []
    for body, dtype, bits, tiles, zero, stages, stream_k in decode_warp_split_instances(sass):
        if tiles > 2:
            continue  # 3-4 token tiles scale per pair by design (no registers for scaled sums)
        checked += 1
        label = f"{dtype} int{bits} tiles={tiles} zero_points={zero} stages={stages}"
        if stream_k:
            label += " stream_k"
        insts = instructions(body)
        found = [[opcode(t) for _, t in insts[f:l + 1]] for f, l in main_loops(insts, 16 * tiles)]
        if not found:
            failures.append(f"{label}: no main loop with {16 * tiles} HMMA found")
            continue
        hfma2 = [ops.count("HFMA2") for ops in found]
        smallest = min(found, key=len)
        shf = smallest.count("SHF")
        summary = (f"{label}: {len(found)} main loops, HFMA2 {hfma2}; loop of {len(smallest)}"
                   f" with {shf} SHF")
        if any(hfma2):
            failures.append(summary + " (a per-pair scale is back in the loop)")
        elif dtype == "f16" and bits == 4 and shf > kMaxHalfInt4Shifts:
            failures.append(summary + f" (more than {kMaxHalfInt4Shifts} SHF: three shifts a word"
                            " again?)")
        elif dtype == "bf16" and bits == 8 and shf > kMaxBf16Int8Shifts:
            failures.append(summary + f" (more than {kMaxBf16Int8Shifts} SHF: the nibble split's"
                            " three shifts a word again?)")
        else:
            print("ok  ", summary)
    return report(checked, failures, f"no decode_warp_split_kernel in {lib} (built without CUDA?)",
                  "warp-split instances at 1-2 token tiles keep the offset form")


if __name__ == "__main__":
    sys.exit(main())
