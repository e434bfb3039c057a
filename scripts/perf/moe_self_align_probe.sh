#!/usr/bin/env bash
# MoE v3 probe (docs/perf/moe.md): is the self-aligned expert GEMM worth a split grid? At one token,
# each variant's plan timed by sailfish_moe_bench in two interleaved rounds (moe_probe.sh):
#   default  the rule (self-align at one split only);
#   s2self   two clustered splits, self-aligned (SAILFISH_MOE_SELF_ALIGN=1 asks for it);
#   s2align  two clustered splits, the align launch;
#   self     the default split depth, self-aligned where the rule would not (Mixtral down's four).
# Usage (on the device, after scripts/device_round.sh build): scripts/perf/moe_self_align_probe.sh
exec bash "$(dirname "$0")/moe_probe.sh" self_align \
  "--tokens 1 --layers qwen3-30b-a3b,mixtral-8x7b,deepseek-v3" \
  default= s2self=SAILFISH_MOE_SPLITS=2,SAILFISH_MOE_SELF_ALIGN=1 \
  s2align=SAILFISH_MOE_SPLITS=2,SAILFISH_MOE_SELF_ALIGN=0 self=SAILFISH_MOE_SELF_ALIGN=1
