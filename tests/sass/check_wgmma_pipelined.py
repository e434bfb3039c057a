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
Without --cuobjdump the binaries of this Python's environment are used (sass_tools.py).
"""
import re
import sys

from sass_tools import functions, library_sass, report


def main():
    lib, sass = library_sass()
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
            failures.append(summary + " (wgmma serialized: see docs/PREFILL.md, two CTA layouts)")
        else:
            print("ok  ", summary)
    return report(checked, failures, f"no prefill_kernel in {lib} (built without sm_90a?)",
                  "prefill kernels pipeline their wgmma")


if __name__ == "__main__":
    sys.exit(main())
