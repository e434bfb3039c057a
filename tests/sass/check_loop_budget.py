#!/usr/bin/env python3
"""SASS check: the main loop of each decode and prefill kernel stays within its instruction budget.

Both tiers are bound inside the SM by instruction issue and latency, not by memory, so their time
follows the main loop's instruction count:
  - docs/perf/decode.md, v11: the decode kernels take as many SM cycles at the profiler's clock as
    at the bench's; fewer instructions paid, more warps did not;
  - docs/perf/prefill.md, v14: a consumer pass with 1.32x the probe's instructions ran 1.34x its
    cycles, and a wide-tile loop 6% longer ran 4-9% slower.
Catching a longer loop here costs no device time.

For each instance the check finds the main loop: the smallest loop that holds the kernel's tensor
instructions (four HGMMA, one k-block's, for prefill; one HMMA or more and its stage refills,
LDGSTS, for decode). It counts the loop's instructions (NOPs left out) and fails when the count
exceeds the budget in loop_budget.json by more than 1%. Every form a loop branches between is in
that count, so it is a static count, not the executed path.

A shorter loop is reported, so its budget can be lowered. A longer one that a device measurement
justified needs its budget raised. Both use --write, which rewrites the file from this build; the
change's perf entry says why.

Usage: check_loop_budget.py --lib libsailfish.a [--cuobjdump PATH] [--write]
"""
import argparse
import json
import os
import re
import sys

from sass_tools import (disassemble, functions, instructions, loops, opcode, report,
                        write_table)

BUDGET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "loop_budget.json")
TOLERANCE = 1.01

# (kernel, tensor opcode, how many of them the main loop holds at least, an opcode it must hold
# too or None). The decode main loops refill stages with cp.async (LDGSTS): since v37 the
# warp-split kernel drains its last stages in a loop of its own, smaller and without copies
# (docs/perf/decode.md), which is not the loop to budget.
FAMILIES = {
    "prefill_kernel": ("HGMMA", 4, None),
    "decode_warp_split_kernel": ("HMMA", 1, "LDGSTS"),
    "decode_kernel": ("HMMA", 1, "LDGSTS"),
}
# A family's name, then its template arguments in the mangled name: the activation type, then
# integers (Li<n>E) and booleans (Lb<0|1>E).
INSTANCE = re.compile(r"(prefill_kernel|decode_warp_split_kernel|decode_kernel)"
                      r"I(13__nv_bfloat16|6__half)((?:L[ib]\d+E)+)")


def instance_key(name):
    """'decode_kernel<bf16,4,8>' for a mangled kernel name of a budgeted family, else None."""
    m = INSTANCE.search(name)
    if not m:
        return None
    dtype = "bf16" if m.group(2) == "13__nv_bfloat16" else "fp16"
    values = re.findall(r"L[ib](\d+)E", m.group(3))
    return m.group(1), f"{m.group(1)}<{','.join([dtype] + values)}>"


def main_loop(insts, tensor_opcode, at_least, also_holds):
    """(instructions, tensor instructions) of the smallest loop holding enough tensor
    instructions (and an `also_holds` instruction where given), or None."""
    for first, last in loops(insts):
        body = [text for _, text in insts[first:last + 1]]
        tensor = sum(1 for text in body if opcode(text) == tensor_opcode)
        holds = also_holds is None or any(opcode(text) == also_holds for text in body)
        if tensor >= at_least and holds:
            return sum(1 for text in body if opcode(text) != "NOP"), tensor
    return None


def measure(sass):
    """({key: {"instructions", "tensor"}}, failure lines, instances looked at)."""
    measured, failures, checked = {}, [], 0
    for name, body in functions(sass):
        found = instance_key(name)
        if found is None:
            continue
        family, key = found
        checked += 1
        loop = main_loop(instructions(body), *FAMILIES[family])
        if loop is None:
            failures.append(f"{key}: no loop with its tensor instructions (and copies, for decode) "
                            f"({name})")
            continue
        measured[key] = {"instructions": loop[0], "tensor": loop[1]}
    return measured, failures, checked


def compare(measured, budget):
    """Failure lines, printing one ok line per instance within its budget."""
    failures = []
    for key, got in sorted(measured.items()):
        want = budget.get(key)
        line = f"{key}: {got['instructions']} instructions, {got['tensor']} tensor"
        if want is None:
            failures.append(f"{line}; no budget (run with --write and commit the file)")
        elif got["tensor"] != want["tensor"]:
            failures.append(f"{line}; the budget's loop has {want['tensor']} tensor instructions")
        elif got["instructions"] > want["instructions"] * TOLERANCE:
            failures.append(f"{line}; over the budget of {want['instructions']} (+1%): these "
                            "loops run at the speed of their instruction count")
        elif got["instructions"] < want["instructions"]:
            print(f"ok   {line}; below the budget of {want['instructions']}: lower it (--write)")
        else:
            print(f"ok   {line}")
    return failures


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
    measured, failures, checked = measure(sass)
    if args.write and not failures:
        write_table(BUDGET, measured, "budgets")
        return 0
    if not args.write:
        with open(BUDGET) as f:
            failures += compare(measured, json.load(f))
    return report(checked, failures, f"no decode or prefill kernel in {args.lib}",
                  "main loops within their instruction budget")


if __name__ == "__main__":
    sys.exit(main())
