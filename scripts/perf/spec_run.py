#!/usr/bin/env python3
"""The command a variant spec's "# run:" comment gives (scripts/device_variant_rounds.sh), with
SPEC replaced by the spec's path: what scripts/device_round.sh's spec-rounds=FILE stage runs, and
where scripts/perf/model_plans.py reads the variants from.

  python3 scripts/perf/spec_run.py SPEC_FILE

The comment is the line starting "# run:" and the lines after it starting "#   " (shell
continuations, their trailing backslashes dropped). Exits 1 where the spec has none.
"""
import sys


def run_command(spec):
    """The run comment's command with SPEC replaced by `spec`, or None where there is none."""
    words, on = [], False
    for line in open(spec):
        if line.startswith("# run:"):
            on = True
            line = line.replace("# run:", "", 1)
        elif on and line.startswith("#   "):
            line = line[1:]
        elif on:
            break
        else:
            continue
        words += line.rstrip("\n").rstrip("\\").split()
    if not words:
        return None
    return " ".join(spec if w == "SPEC" else w for w in words)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    command = run_command(sys.argv[1])
    if command is None:
        print(f"{sys.argv[1]}: no '# run:' comment", file=sys.stderr)
        return 1
    print(command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
