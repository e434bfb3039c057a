#!/usr/bin/env python3
"""A refactor's proof without a GPU: the library's SASS before and after, function by function.

A change meant to move no instruction (a kernel split into files, a lambda made a struct) is shown
to do so when every kernel disassembles to the same instructions: same opcodes, operands, order
and addresses. What runs on the device is then what ran before, so the device figures and GPU test
results recorded for the old tree hold for the new one.

  sass_snapshot.py save --lib build/src/libsailfish.a --out /tmp/before.json
  (edit, rebuild)
  sass_snapshot.py compare --lib build/src/libsailfish.a --against /tmp/before.json

`compare` prints one line per function that changed (instruction counts before and after, and the
first differing instruction), one line per function added or removed, and a closing count.
ptxas numbers registers after the order of the compiler's intermediate code, so a refactor that
changes that order can swap register names and nothing else; that shows as a change here, and is
best avoided by keeping the computations' order (evaluate arguments where the old code did).
Exit status: 0 when every function is identical, 1 otherwise. Functions are keyed by mangled
name, so a renamed kernel shows as one removed and one added. A template parameter added with a
default renames every instance; --rename REGEX=REPLACEMENT (re.sub on the new names, repeatable)
maps them back, e.g. for a trailing `bool kMoe = false`:
  --rename 'ELb0EEEvNS0_12DecodeParamsE$=EEEvNS0_12DecodeParamsE'
"""
import argparse
import json
import re
import sys

from sass_tools import disassemble, functions, instructions


def snapshot(lib, cuobjdump=None):
    """table_of the SASS of lib, or exits on failure."""
    sass, failure = disassemble(lib, cuobjdump)
    if failure:
        print(f"FAIL: {failure}")
        sys.exit(1)
    return table_of(sass)


def table_of(sass):
    """{mangled name: [instruction text, ...]} of every function in cuobjdump -sass output.

    cuobjdump prints a function once per object file that holds it; a name seen twice keeps its
    first body unless the two differ, which is reported as a separate key (name#2)."""
    table = {}
    for name, body in functions(sass):
        text = [f"{address:x} {inst}" for address, inst in instructions(body)]
        key, copy = name, 1
        while key in table and table[key] != text:
            copy += 1
            key = f"{name}#{copy}"
        table[key] = text
    return table


def renamed(table, rules):
    """table with each name passed through the (pattern, replacement) rules in turn."""
    out = {}
    for name, body in table.items():
        for pattern, replacement in rules:
            name = re.sub(pattern, replacement, name)
        out[name] = body
    return out


def first_difference(before, after):
    for i, (b, a) in enumerate(zip(before, after)):
        if b != a:
            return f"#{i}: '{b}' -> '{a}'"
    shorter = min(len(before), len(after))
    return f"#{shorter}: one side ends"


def compare(before, after):
    """(lines describing each difference, functions compared)."""
    lines = []
    for name in sorted(before.keys() - after.keys()):
        lines.append(f"removed {name} ({len(before[name])} instructions)")
    for name in sorted(after.keys() - before.keys()):
        lines.append(f"added {name} ({len(after[name])} instructions)")
    common = sorted(before.keys() & after.keys())
    for name in common:
        if before[name] != after[name]:
            lines.append(f"changed {name}: {len(before[name])} -> {len(after[name])} instructions, "
                         f"first at {first_difference(before[name], after[name])}")
    return lines, len(common)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("action", choices=["save", "compare"])
    parser.add_argument("--lib", required=True)
    parser.add_argument("--cuobjdump")
    parser.add_argument("--out", help="save: the snapshot file to write")
    parser.add_argument("--against", help="compare: a snapshot file written by save")
    parser.add_argument("--rename", action="append", default=[], metavar="REGEX=REPLACEMENT",
                        help="compare: rewrite the new names before matching them (repeatable)")
    args = parser.parse_args()
    rules = []
    for rule in args.rename:
        pattern, sep, replacement = rule.partition("=")
        if not sep:
            parser.error(f"--rename takes REGEX=REPLACEMENT, got {rule!r}")
        rules.append((pattern, replacement))
    table = snapshot(args.lib, args.cuobjdump)
    if args.action == "save":
        if not args.out:
            parser.error("save needs --out")
        with open(args.out, "w") as f:
            json.dump(table, f)
        print(f"saved {len(table)} functions of {args.lib} to {args.out}")
        return 0
    if not args.against:
        parser.error("compare needs --against")
    with open(args.against) as f:
        before = json.load(f)
    lines, compared = compare(before, renamed(table, rules))
    for line in lines:
        print(line)
    same = compared - sum(1 for line in lines if line.startswith("changed"))
    print(f"{same} of {compared} functions identical; {len(lines)} differences")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
