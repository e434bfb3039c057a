#!/usr/bin/env python3
"""SASS check: every prefill kernel keeps its wgmma groups in flight.

ptxas serializes register-sourced wgmma when the register budget cannot hold the fragments of the
groups in flight, saying so only in an info line (C7512) that a build log buries: it then waits
for completion after every HGMMA
(`WARPGROUP.DEPBAR.LE gsb0, 0x0`), which roughly halves the narrow tiles' throughput
(docs/perf/prefill.md, v8). This check disassembles the library and requires, for each
prefill_kernel instance:
  - HGMMA instructions in the main loop;
  - exactly one full drain (`DEPBAR.LE gsb0, 0x0`, after the k-loop) per unit loop;
  - partial waits (`DEPBAR.LE gsb0, 0xN`, N = fragment sets - 1 > 0) in the steady state.

Usage: check_wgmma_pipelined.py --lib libsailfish.a [--cuobjdump PATH]
Without --cuobjdump the binaries of the nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels in
this Python's environment are used (scripts/stage_deps.sh installs them into the venv; cuobjdump
runs nvdisasm for -sass). A missing binary is a failure, not a skip: CI always has the venv.
"""
import argparse
import glob
import os
import re
import subprocess
import sys


def find_tool(name):
    pattern = os.path.join(sys.prefix, "lib", "python3*", "site-packages", "nvidia", "cu*", "bin",
                           name)
    found = sorted(glob.glob(pattern))
    return found[-1] if found else None


def functions(sass):
    """Yields (name, body) for each function in cuobjdump -sass output."""
    name, body = None, []
    for line in sass.splitlines():
        m = re.match(r"\s+Function : (\S+)", line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
        elif name:
            body.append(line)
    if name:
        yield name, body


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--cuobjdump")
    args = parser.parse_args()
    tool = args.cuobjdump or find_tool("cuobjdump")
    if not tool or not os.path.exists(tool):
        print("FAIL: no cuobjdump (install nvidia-cuda-cuobjdump: scripts/stage_deps.sh)")
        return 1
    env = dict(os.environ)
    nvdisasm = find_tool("nvdisasm")
    if nvdisasm:
        env["NVDISASM_PATH"] = os.path.dirname(nvdisasm)
        env["PATH"] = os.path.dirname(nvdisasm) + os.pathsep + env.get("PATH", "")
    run = subprocess.run([tool, "-sass", args.lib], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        print(f"FAIL: {tool} -sass {args.lib}: {run.stderr.strip()}")
        return 1
    sass = run.stdout
    checked, failures = 0, []
    for name, body in functions(sass):
        if "prefill_kernel" not in name:
            continue
        checked += 1
        text = "\n".join(body)
        hgmma = len(re.findall(r"\bHGMMA\.", text))
        waits = re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, (0x[0-9a-f]+)", text)
        drains = sum(1 for w in waits if int(w, 16) == 0)
        partial = sum(1 for w in waits if int(w, 16) > 0)
        summary = f"{name}: {hgmma} HGMMA, {partial} partial waits, {drains} drains"
        if hgmma == 0 or drains != 1 or partial == 0:
            failures.append(summary)
        else:
            print("ok  ", summary)
    if checked == 0:
        print(f"FAIL: no prefill_kernel in {args.lib} (built without sm_90a?)")
        return 1
    for f in failures:
        print("FAIL", f, "(wgmma serialized: see docs/PREFILL.md, two CTA layouts)")
    print(f"{checked - len(failures)} of {checked} prefill kernels pipeline their wgmma")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
