#!/usr/bin/env bash
# MoE block-rows probe (docs/perf/moe.md, "The block-rows probe"): plan_moe takes the smallest
# block of 8, 16 or 32 rows that holds an expert's average rows, but a uniform routing leaves many
# experts above the average, and each block past an expert's first streams its weight again: at
# 64 tokens Mixtral's 16-row blocks stream an expert 1.42 times on average, 32-row blocks once,
# for 1.41x the token tiles (scripts/perf/moe_block_rows_model.py). Each variant timed by
# sailfish_moe_bench in two interleaved rounds (moe_probe.sh):
#   default  the rule;  b8, b16, b32  SAILFISH_MOE_BLOCK_ROWS forced.
# Usage (on the device, after scripts/device_round.sh build): scripts/perf/moe_block_rows_probe.sh
exec bash "$(dirname "$0")/moe_probe.sh" block_rows \
  "--tokens 64,256 --layers qwen3-30b-a3b,mixtral-8x7b,deepseek-v3,gpt-oss-120b" \
  default= b8=SAILFISH_MOE_BLOCK_ROWS=8 b16=SAILFISH_MOE_BLOCK_ROWS=16 b32=SAILFISH_MOE_BLOCK_ROWS=32
