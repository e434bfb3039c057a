#!/usr/bin/env python3
"""SASS check: each prefill kernel's k-loop stays within its instruction budget.

The prefill consumers are bound by instruction issue and latency inside the SM, not by memory, so
their time follows the k-loop's instruction count (docs/perf/prefill.md, v14):
  - a consumer pass with 1.32x the probe's instructions ran 1.34x its cycles;
  - a wide-tile loop 6% longer ran 4-9% slower.
Catching a longer loop here costs no device time. For each prefill_kernel instance the check finds
the k-loop: the smallest loop holding at least one block's four wgmmas. That loop holds both
dequantization forms, so this is a static count, not the executed path. The check counts its
instructions (NOPs left out) and fails when the count exceeds the budget in
prefill_loop_budget.json by more than 1%. A loop that got shorter is reported, so its budget can
be lowered: --write rewrites the file from this build.

Usage: check_prefill_loop_budget.py --lib libsailfish.a [--cuobjdump PATH] [--write]
"""
import argparse
import json
import os
import re
import sys

from sass_tools import disassemble, functions, instructions, loops, opcode, report

BUDGET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "prefill_loop_budget.json")
TOLERANCE = 1.01

# prefill_kernel<T, bits, tokens, zero points, ...> in a mangled name.
INSTANCE = re.compile(r"prefill_kernelI(13__nv_bfloat16|6__half)Li(\d+)ELi(\d+)ELb([01])E")


def instance_key(name):
    m = INSTANCE.search(name)
    if not m:
        return None
    dtype = "bf16" if m.group(1) == "13__nv_bfloat16" else "fp16"
    zero = "zp" if m.group(4) == "1" else "sym"
    return f"{dtype} int{m.group(2)} t{m.group(3)} {zero}"


def k_loop(insts):
    """(instructions, wgmmas) of the smallest loop holding four or more wgmmas, or None."""
    for first, last in loops(insts):
        body = [text for _, text in insts[first:last + 1]]
        wgmmas = sum(1 for text in body if opcode(text) == "HGMMA")
        if wgmmas >= 4:
            return sum(1 for text in body if opcode(text) != "NOP"), wgmmas
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--cuobjdump")
    parser.add_argument("--write", action="store_true", help="rewrite the budget from this build")
    args = parser.parse_args()
    sass, failure = disassemble(args.lib, args.cuobjdump)
    if failure:
        print(f"FAIL: {failure}")
        return 1
    measured, failures, checked = {}, [], 0
    for name, body in functions(sass):
        key = instance_key(name)
        if key is None:
            continue
        checked += 1
        found = k_loop(instructions(body))
        if found is None:
            failures.append(f"{key}: no loop with four wgmmas ({name})")
            continue
        measured[key] = {"instructions": found[0], "wgmmas": found[1]}
    if args.write:
        with open(BUDGET, "w") as f:
            json.dump(dict(sorted(measured.items())), f, indent=1)
            f.write("\n")
        print(f"wrote {len(measured)} budgets to {BUDGET}")
        return 0
    with open(BUDGET) as f:
        budget = json.load(f)
    for key, got in sorted(measured.items()):
        want = budget.get(key)
        per_block = got["instructions"] / (got["wgmmas"] / 4)
        line = (f"{key}: {got['instructions']} instructions, {got['wgmmas']} wgmmas "
                f"({per_block:.1f} a block, both dequantization forms)")
        if want is None:
            failures.append(f"{line}; no budget (run with --write and commit the file)")
        elif got["wgmmas"] != want["wgmmas"]:
            failures.append(f"{line}; the budget's loop has {want['wgmmas']} wgmmas")
        elif got["instructions"] > want["instructions"] * TOLERANCE:
            failures.append(f"{line}; over the budget of {want['instructions']} (+1%): the "
                            "prefill loops run at the speed of their instruction count")
        elif got["instructions"] < want["instructions"]:
            print(f"ok   {line}; below the budget of {want['instructions']}: lower it (--write)")
        else:
            print(f"ok   {line}")
    return report(checked, failures,
                  f"no prefill_kernel in {args.lib} (built without sm_90a?)",
                  "prefill k-loops within their instruction budget")


if __name__ == "__main__":
    sys.exit(main())
