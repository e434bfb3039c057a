#!/usr/bin/env python3
"""A variant spec's decode plans on the CPU planner model, before any device run: which variants
plan alike on every row (and so would only time the same launch twice).

  python3 scripts/perf/model_plans.py SPEC_FILE [--tool build/tests/sailfish_plan_model]

SPEC_FILE is a scripts/device_variant_rounds.sh spec: its "# run:" comment (spec_run.py) names
the variants (NAME= a build, NAME=env:BUILD:VAR=VALUE,... a run-time variant), its lines
label|variants|bench arguments. The model (tests/model, sailfish_plan_model) plans every row of each line for each
run-time variant with its SAILFISH_* settings, on the default build; a variant of another build
(compile flags) is not modelled and is said so. Per line: every row's plans, a variant planning
as an earlier one on that row shown as "= earlier", then each variant's count of such rows. The
model reproduces 86 of the 89 plans last recorded on the H200 (docs/DECODE.md, "The planner
without a GPU"), so a duplicate here is a strong hint, not a proof.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

from spec_run import run_command
from variant_summary import spec_lines

# Bench arguments the model takes as they are (tests/model/plan_model_main.cpp).
PASSED = {"--shapes": True, "-m": True, "--m": True, "--bits": True, "--group": True,
          "--group-size": True, "--dtype": True, "--zero-points": False}


def run_variants(spec):
    """{name: (build, {VAR: VALUE})} from the spec's run command (spec_run.py); a build
    variant's build is its own name, or None where it has compile flags (not modelled)."""
    words = (run_command(spec) or "").split()
    script = [i for i, w in enumerate(words) if w.endswith("device_variant_rounds.sh")]
    variants = {}
    # After the script and its spec argument; the words before are the environment.
    for token in words[script[0] + 2:] if script else []:
        m = re.fullmatch(r"(\w+)=(.*)", token)
        if not m:
            continue
        name, value = m.groups()
        if value.startswith("env:"):
            build, _, settings = value[4:].partition(":")
            variants[name] = (build, dict(s.split("=", 1) for s in settings.split(",") if s))
        else:
            variants[name] = (name if value == "" else None, {})
    return variants


def model_args(bench_args):
    """The bench arguments the model takes, and whether the line asks for the decode tier."""
    words, out, decode = shlex.split(bench_args), [], True
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("--tiers", "--tier") and i + 1 < len(words):
            decode = "decode" in words[i + 1].split(",")
        if w in PASSED:
            out.append("-m" if w == "--m" else "--group" if w == "--group-size" else w)
            if PASSED[w] and i + 1 < len(words):
                out.append(words[i + 1])
                i += 1
        i += 1
    return out, decode


def plans(tool, args, settings):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAILFISH_")}
    env.update(settings)
    run = subprocess.run([tool] + args, capture_output=True, text=True, env=env)
    if run.returncode != 0:
        raise SystemExit(f"{tool} {' '.join(args)}: {run.stderr.strip()}")
    rows = {}
    for line in run.stdout.splitlines():
        shape, m, launch = line.split(" ", 2)
        rows[(shape, int(m))] = launch
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("spec")
    parser.add_argument("--tool", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "..", "..", "build", "tests",
                                                       "sailfish_plan_model"))
    args = parser.parse_args()
    variants = run_variants(args.spec)
    for label, names, bench_args in spec_lines(args.spec):
        margs, decode = model_args(bench_args)
        print(f"\n## {label}\n")
        if not decode:
            print("not the decode tier: the model plans only decode")
            continue
        modelled, skipped = {}, []
        for n in names:
            if n not in variants:
                raise SystemExit(f"{label}: variant {n} is not in the spec's run: comment")
            build, settings = variants[n]
            if build is None or variants.get(build, (None,))[0] is None:
                skipped.append(n)  # built with compile flags of its own
                continue
            modelled[n] = plans(args.tool, margs, settings)
        if skipped:
            print(f"not modelled (builds with their own flags): {', '.join(skipped)}\n")
        keys = list(next(iter(modelled.values())).keys()) if modelled else []
        repeats = {n: 0 for n in modelled}
        print("| shape | M | " + " | ".join(modelled) + " |")
        print("|" + "---|" * (len(modelled) + 2))
        for key in keys:
            seen, cells = {}, []
            for n, rows in modelled.items():
                launch = rows[key]
                if launch in seen:
                    cells.append(f"= {seen[launch]}")
                    repeats[n] += 1
                else:
                    seen[launch] = n
                    cells.append(short(launch))
            print(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
        print(f"\n{label}: rows where a variant plans as an earlier one, of {len(keys)}: " +
              ", ".join(f"{n} {c}" for n, c in repeats.items()))
    return 0


def short(launch):
    """The launch without the words every decode plan has."""
    return re.sub(r"warp_split |m_groups=1 |epilogue=3 |cluster_push=1 ", "", launch)


if __name__ == "__main__":
    sys.exit(main())
