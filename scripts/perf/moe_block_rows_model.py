#!/usr/bin/env python3
"""What each MoE block size costs under sailfish_moe_bench's routing, before a device run.

  python3 scripts/perf/moe_block_rows_model.py [--tokens 8,64,256]

The bench draws each token's top_k experts uniformly and distinct (bench/moe/moe_bench.cu), so an
expert's rows are Binomial(tokens, top_k / experts). The align step cuts each expert's rows into
blocks of 8, 16 or 32 (docs/MOE.md), and each block streams its expert's whole weight, so per
block size this prints, exactly (no sampling):
  - blocks: the expected blocks the routing fills;
  - passes: blocks over the experts touched, how many times each touched expert's weight is
    streamed on average (the bench's floor streams it once);
  - tiles: blocks x 8-token tiles a block, the mma work in token tiles.
`rule` is plan_moe's choice for an expert of unknown size (moe_block_rows_for: the smallest block
that holds the average rows of a filled expert; a projection of 4 MiB or more takes 16 at 8
rows). `issue-bound` is the block size a candidate rule would take: the fewest
blocks x main-loop instructions a block of the MoE kernel instance (bf16 int4, symmetric, from
tests/sass/loop_budget.json: 1, 2 and 4 token tiles), the cost if the loop's issue bounds the
time; `passes` alone is the cost if DRAM does. The block-rows probe
(scripts/perf/moe_block_rows_probe.sh) measures which. The layers are read from the bench's
table (bench/moe/moe_layers.h).
"""
import argparse
import json
import math
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
LAYERS_HEADER = os.path.join(ROOT, "bench", "moe", "moe_layers.h")
LOOP_BUDGET = os.path.join(ROOT, "tests", "sass", "loop_budget.json")
BLOCK_ROWS = (8, 16, 32)


def bench_layers(path):
    """(name, experts, top_k) of every kMoeLayers entry: {"name", experts, top_k, hidden, inter}."""
    with open(path) as f:
        text = f.read()
    layers = [(name, int(experts), int(top_k)) for name, experts, top_k in
              re.findall(r'\{"([^"]+)",\s*(\d+),\s*(\d+),\s*\d+,\s*\d+\}', text)]
    if not layers:
        raise ValueError(f"no MoE layers found in {path}")
    return layers


def loop_instructions(path):
    """Main-loop instructions a block of the MoE instance, by block rows (8 rows a token tile)."""
    with open(path) as f:
        budget = json.load(f)
    return {b: budget[f"decode_warp_split_kernel<bf16,4,{b // 8},0,4,0,4,1>"]["instructions"]
            for b in BLOCK_ROWS}


def rule_block_rows(choices, experts):
    """moe_block_rows_for (src/moe/moe_routing.cpp) with the expert's size unknown: this table is
    per layer, and the rule's large-expert case (16 rows at 8 average rows) is per projection."""
    filled = min(choices, experts)
    rows = -(-choices // filled)
    return next((b for b in BLOCK_ROWS if rows <= b), BLOCK_ROWS[-1])


def expected_blocks(tokens, p, block_rows):
    """E[ceil(c / block_rows)] for c ~ Binomial(tokens, p), one expert."""
    if p >= 1:  # every token picks every expert
        return -(-tokens // block_rows)
    total = 0.0
    for c in range(1, tokens + 1):
        log_pmf = (math.lgamma(tokens + 1) - math.lgamma(c + 1) - math.lgamma(tokens - c + 1) +
                   c * math.log(p) + (tokens - c) * math.log1p(-p))
        total += math.exp(log_pmf) * -(-c // block_rows)
    return total


def layer_rows(experts, top_k, tokens):
    p = top_k / experts
    touched = experts * (1 - (1 - p) ** tokens)
    out = {}
    for b in BLOCK_ROWS:
        blocks = experts * expected_blocks(tokens, p, b)
        out[b] = (blocks, blocks / touched, blocks * (b // 8))
    return touched, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", default="8,64,256")
    parser.add_argument("--loop-budget", default=LOOP_BUDGET, help="tests/sass/loop_budget.json")
    args = parser.parse_args()
    instructions = loop_instructions(args.loop_budget)
    layers = bench_layers(LAYERS_HEADER)
    try:
        token_counts = [int(t) for t in args.tokens.split(",")]
    except ValueError:
        print("--tokens takes a comma-separated list of counts", file=sys.stderr)
        return 2
    if any(t < 1 for t in token_counts):
        print("--tokens takes positive counts", file=sys.stderr)
        return 2
    print("loop instructions a block: " +
          ", ".join(f"{b} rows {instructions[b]}" for b in BLOCK_ROWS) + "\n")
    print("| layer | tokens | touched | rule | issue-bound | " +
          " | ".join(f"b{b} blocks | b{b} passes | b{b} tiles" for b in BLOCK_ROWS) + " |")
    print("|---|---|---|---|---|" + "---|" * (3 * len(BLOCK_ROWS)))
    for name, experts, top_k in layers:
        for tokens in token_counts:
            touched, rows = layer_rows(experts, top_k, tokens)
            cells = " | ".join(f"{rows[b][0]:.1f} | {rows[b][1]:.2f} | {rows[b][2]:.1f}"
                               for b in BLOCK_ROWS)
            issue_bound = min(BLOCK_ROWS, key=lambda b: rows[b][0] * instructions[b])
            print(f"| {name} | {tokens} | {touched:.1f} | "
                  f"{rule_block_rows(tokens * top_k, experts)} | {issue_bound} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
