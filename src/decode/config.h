// Decode tier configuration: the tile constants, the shared-memory formulas and the plan's rules,
// usable on host and device so CPU tests can check them. One header an idea:
//   - tile_shapes.h: what a CTA owns, its pipeline's stages and their bytes, the token tiles;
//   - grid_placement.h: how a grid sits on the SMs (busiest SM, room for the next launch, padding);
//   - warp_split_instances.h: the warp-split instances (stages a warp, eight warps, evict-first)
//     and the rules that pick one;
//   - cluster_epilogue.h: how partial sums leave a CTA, and the cluster push form's arithmetic;
//   - split_depth.h: the split-K depth, the pair and quad rules, the cluster epilogue's depth;
//   - stream_k_grid.h: Stream-K within clusters (opt-in).
#pragma once

#include "decode/cluster_epilogue.h"
#include "decode/grid_placement.h"
#include "decode/split_depth.h"
#include "decode/stream_k_grid.h"
#include "decode/tile_shapes.h"
#include "decode/warp_split_instances.h"
