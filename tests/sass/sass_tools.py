"""Shared by the SASS checks: find cuobjdump, disassemble a library, split it into functions.

cuobjdump and nvdisasm come from the nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels in
this Python's environment (scripts/stage_deps.sh installs them into the venv; cuobjdump runs
nvdisasm for -sass). A missing binary is a failure, not a skip: CI always has the venv.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys


def find_tool(name):
    pattern = os.path.join(sys.prefix, "lib", "python3*", "site-packages", "nvidia", "cu*", "bin",
                           name)
    found = sorted(glob.glob(pattern))
    return found[-1] if found else None


def disassemble(lib, cuobjdump=None):
    """Returns (sass text, None) or (None, failure message)."""
    tool = cuobjdump or find_tool("cuobjdump")
    if not tool or not os.path.exists(tool):
        return None, "no cuobjdump (install nvidia-cuda-cuobjdump: scripts/stage_deps.sh)"
    env = dict(os.environ)
    nvdisasm = find_tool("nvdisasm")
    if nvdisasm:
        env["NVDISASM_PATH"] = os.path.dirname(nvdisasm)
        env["PATH"] = os.path.dirname(nvdisasm) + os.pathsep + env.get("PATH", "")
    run = subprocess.run([tool, "-sass", lib], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        return None, f"{tool} -sass {lib}: {run.stderr.strip()}"
    return run.stdout, None


def library_sass():
    """Parses the checks' command line (--lib LIB [--cuobjdump PATH]) and disassembles LIB.

    Returns (lib path, sass text); on a failure prints it and exits with status 1.
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--cuobjdump")
    args = parser.parse_args()
    sass, failure = disassemble(args.lib, args.cuobjdump)
    if failure:
        print(f"FAIL: {failure}")
        sys.exit(1)
    return args.lib, sass


def write_table(path, entries, what):
    """Writes a check's table (the --write of check_loop_budget.py, check_decode_registers.py):
    entries sorted by key, one per line, and says how many `what` it wrote."""
    with open(path, "w") as f:
        json.dump(dict(sorted(entries.items())), f, indent=1)
        f.write("\n")
    print(f"wrote {len(entries)} {what} to {path}")


def report(checked, failures, missing, verdict):
    """Prints each failure and a closing line; returns the check's exit status.

    checked: instances looked at; failures: their failure lines; missing: the FAIL line when
    nothing was checked (the library lacks the kernels); verdict: what the passing ones keep,
    after "<passed> of <checked> ".
    """
    if checked == 0:
        print(f"FAIL: {missing}")
        return 1
    for f in failures:
        print("FAIL", f)
    print(f"{checked - len(failures)} of {checked} {verdict}")
    return 1 if failures else 0


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


def instructions(body):
    """(address, instruction text without predicate guard's padding) for each SASS line."""
    out = []
    for line in body:
        m = re.match(r"\s+/\*([0-9a-f]+)\*/\s+(.*?)\s*;", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def opcode(text):
    """The opcode without modifiers or predicate: '@!P0 LDS.128 R4, [R2]' -> 'LDS'."""
    text = re.sub(r"^@!?U?P\w+\s+", "", text)
    return text.split()[0].split(".")[0]


def loops(insts):
    """(first index, last index) of each backward branch's body, smallest first."""
    index = {a: i for i, (a, _) in enumerate(insts)}
    found = []
    for i, (a, text) in enumerate(insts):
        m = re.search(r"\bBRA\s+(?:\S+\s+)?(0x[0-9a-f]+)", text)
        if m:
            target = int(m.group(1), 16)
            if target < a and target in index:
                found.append((index[target], i))
    return sorted(found, key=lambda r: r[1] - r[0])


# decode_warp_split_kernel<T, bits, tiles, zero points, stages[, stream_k]> in a mangled name:
# groups 1 (type: 13__nv_bfloat16 or 6__half), 2 (bits), 3 (tiles), 4 (zero points, 0 or 1),
# 5 (stages), 6 (Stream-K, 0 or 1, absent in older builds).
DECODE_WARP_SPLIT_INSTANCE = re.compile(
    r"decode_warp_split_kernelI(13__nv_bfloat16|6__half)Li(\d+)ELi(\d+)ELb([01])ELi(\d+)E"
    r"(?:Lb([01])E)?")


def main_loops(insts, min_hmma):
    """(first, last) index of each innermost loop with at least min_hmma HMMA (the decode main
    loops: a block is 16 HMMA per token tile); a loop that encloses one found is skipped."""
    chosen = []
    for first, last in loops(insts):  # smallest first
        ops = [opcode(t) for _, t in insts[first:last + 1]]
        if ops.count("HMMA") < min_hmma:
            continue
        if any(first <= f and l <= last for f, l in chosen):
            continue
        chosen.append((first, last))
    return chosen


def decode_warp_split_instances(sass):
    """Yields (body, dtype, bits, tiles, zero_points, stages, stream_k) for each
    decode_warp_split_kernel instance: dtype "bf16" or "f16", stream_k False where the build
    predates it."""
    for name, body in functions(sass):
        m = DECODE_WARP_SPLIT_INSTANCE.search(name)
        if m:
            yield (body, "f16" if m.group(1) == "6__half" else "bf16", int(m.group(2)),
                   int(m.group(3)), m.group(4) == "1", int(m.group(5)), m.group(6) == "1")
