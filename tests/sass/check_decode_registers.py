#!/usr/bin/env python3
"""SASS check: the registers a thread of every decode kernel instance are those in
decode_registers.json, the table the CPU planner tests' GPU model reads.

The CPU tests (tests/cpu/decode_plan_test.cpp) run plan_decode on a model of the H200 instead of
CUDA's occupancy queries, and the occupancy follows each instance's registers a thread. A kernel
change that moves them must move the model too, or the model plans for kernels that are no longer
built. --write rewrites the table from this build. (The instances declare no static shared
memory: cuobjdump's SHARED:1024 on sm_90 is the block's reserved 1 KB, which the model adds as
cudaDevAttrReservedSharedMemoryPerBlock.)

Usage: check_decode_registers.py --lib libsailfish.a [--cuobjdump PATH] [--write]
"""
import argparse
import json
import os
import re
import subprocess
import sys

from check_loop_budget import instance_key
from sass_tools import find_tool, report, write_table

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "decode_registers.json")
FAMILIES = ("decode_warp_split_kernel", "decode_kernel")


def resource_usage(lib, cuobjdump=None):
    """({instance key: registers a thread}, None) or (None, failure message)."""
    tool = cuobjdump or find_tool("cuobjdump")
    if not tool or not os.path.exists(tool):
        return None, "no cuobjdump (install nvidia-cuda-cuobjdump: scripts/stage_deps.sh)"
    run = subprocess.run([tool, "--dump-resource-usage", lib], capture_output=True, text=True)
    if run.returncode != 0:
        return None, f"{tool} --dump-resource-usage {lib}: {run.stderr.strip()}"
    found, name = {}, None
    for line in run.stdout.splitlines():
        m = re.search(r"Function (\S+):", line)
        if m:
            name = m.group(1)
            continue
        m = re.search(r"REG:(\d+)", line)
        if m and name:
            key = instance_key(name)
            if key and key[0] in FAMILIES:
                found[key[1]] = int(m.group(1))
            name = None
    return found, None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--cuobjdump")
    parser.add_argument("--write", action="store_true", help="rewrite the table from this build")
    args = parser.parse_args()
    built, failure = resource_usage(args.lib, args.cuobjdump)
    if failure:
        print(f"FAIL: {failure}")
        return 1
    if args.write:
        write_table(TABLE, built, "instances")
        return 0
    with open(TABLE) as f:
        table = json.load(f)
    failures = []
    for key in sorted(set(built) | set(table)):
        if key not in table:
            failures.append(f"{key}: built, not in the table (run with --write and commit it)")
        elif key not in built:
            failures.append(f"{key}: in the table, not built")
        elif built[key] != table[key]:
            failures.append(f"{key}: built with {built[key]} registers, table {table[key]}")
    return report(len(built), failures, f"no decode kernel in {args.lib}",
                  "decode instances with the table's registers")


if __name__ == "__main__":
    sys.exit(main())
