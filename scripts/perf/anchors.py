"""The peer figures of an anchors file (../shared/anchors/h200-anchors.json) for the perf tables.

PEERS are the quantized-GEMM peers the issues measure against (tinygemm, both Marlins, Machete,
Swordfish); best_peers gives the fastest of them per (shape, M).
"""
import json

PEERS = ("torch_int4_tinygemm_bf16_g128", "marlin_fp16_g128", "vllm_marlin_bf16_g128",
         "machete_bf16_g128", "swordfish_decode_sm90")


def best_peers(path):
    """{(shape, M): microseconds of the fastest peer} for the rows of the anchors file at path."""
    peers = {}
    with open(path) as f:
        for r in json.load(f)["rows"]:
            times = [r[c] for c in PEERS if isinstance(r.get(c), (int, float))]
            if times:
                peers[(r["shape"], r["M"])] = min(times)
    return peers
