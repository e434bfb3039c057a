#!/usr/bin/env python3
"""Check of sass_snapshot.py, the refactor tool: on this build's library, a snapshot compares equal
to itself, a snapshot with one function changed, one gone and one added reports exactly those
three and fails, and --rename's rules map renamed functions back to their old names.

Usage: check_sass_snapshot.py --lib libsailfish.a [--cuobjdump PATH]
"""
import sys

from sass_snapshot import compare, renamed, table_of
from sass_tools import library_sass


def main():
    lib, sass = library_sass()
    table = table_of(sass)
    names = sorted(name for name in table if "decode_warp_split_kernel" in name)
    if len(names) < 3:
        print(f"FAIL: {len(names)} warp-split kernels in {lib}; the check needs three")
        return 1
    lines, compared = compare(table, table)
    if lines or compared != len(table):
        print(f"FAIL: a snapshot against itself: {lines[:3]}, {compared} of {len(table)} compared")
        return 1
    edited = dict(table)
    changed, removed, added = names[0], names[1], "added_kernel"
    body = list(edited[changed])
    body[len(body) // 2] = body[len(body) // 2] + " (edited)"
    edited[changed] = body
    del edited[removed]
    edited[added] = ["0 EXIT"]
    lines, compared = compare(table, edited)
    expected = {f"changed {changed}", f"removed {removed}", f"added {added}"}
    found = {line.split(":")[0].split(" (")[0] for line in lines}
    if found != expected or compared != len(table) - 1:
        print(f"FAIL: expected {sorted(expected)}, got {lines} ({compared} compared)")
        return 1
    # Every warp-split kernel renamed as a new trailing template argument would: the rule maps
    # them back, and nothing else moves.
    suffixed = {name.replace("EEEvNS0_12DecodeParamsE", "ELb0EEEvNS0_12DecodeParamsE"): body
                for name, body in table.items()}
    if suffixed == table:
        print("FAIL: no mangled name ends in EEEvNS0_12DecodeParamsE to rename")
        return 1
    lines, _ = compare(table, renamed(suffixed, [("ELb0EEEvNS0_12DecodeParamsE$",
                                                  "EEEvNS0_12DecodeParamsE")]))
    if lines:
        print(f"FAIL: renamed back, still {len(lines)} differences: {lines[:2]}")
        return 1
    print(f"sass_snapshot: {len(table)} functions, a copy with 3 edits reported as 3 differences, "
          "a renamed copy mapped back whole")
    return 0


if __name__ == "__main__":
    sys.exit(main())
