// How a decode grid sits on the SMs: the busiest SM's share, whether a CTA of the next launch
// still finds room (programmatic dependent launch), and the shared-memory padding that spreads a
// grid evenly. Host and device; the plan's rules (split_depth.h, warp_split_instances.h) count
// with them.
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "decode/tile_shapes.h"

namespace sailfish::decode {

// The CTAs on a grid's busiest SM when its grid_ctas CTAs spread evenly over sm_count SMs (all of
// them where sm_count is not positive).
SF_HOST_DEVICE constexpr int64_t busiest_sm_ctas(int64_t grid_ctas, int sm_count) {
  return sm_count > 0 ? (grid_ctas + sm_count - 1) / sm_count : grid_ctas;
}
// How well a grid of grid_ctas sits on sm_count SMs that hold ctas_per_sm of its CTAs each
// (counted with the cluster push form's receive area where the plan will take it): 0, more than
// one wave; 1, one wave with no room on its busiest SM (ceil(grid_ctas / sm_count) CTAs) for a
// CTA of the next launch; 2, one wave with that room. The room matters because programmatic
// dependent launch starts the next kernel's CTAs while this one's run: where they cannot be
// resident, the next layer's weight stream waits for this grid to drain.
SF_HOST_DEVICE constexpr int warp_split_residency(int64_t grid_ctas, int sm_count,
                                                  int ctas_per_sm) {
  const int64_t busiest = busiest_sm_ctas(grid_ctas, sm_count);
  return ctas_per_sm >= busiest + 1 ? 2 : ctas_per_sm >= busiest ? 1 : 0;
}
// The most dynamic shared memory one CTA may ask for on sm_90 (the opt-in limit, 227 KB): the
// spread padding below may take a kernel instance up to it.
constexpr int kMaxLaunchSharedBytes = 227 * 1024;
// Dynamic shared memory (a multiple of 128 bytes, at least `shared`) with which an SM of
// smem_per_sm bytes, reserving reserved_per_cta for each CTA, holds at most `ctas` CTAs: ctas + 1
// of them no longer fit. 0 where `shared` already holds it to `ctas`, or where the padding would
// pass kMaxLaunchSharedBytes. The plan pads to the grid's even share, ceil(CTAs / SMs)
// (launch.cu, spread_over_sms): a grid smaller than what the SMs hold can otherwise land several
// CTAs on some SMs and none on others.
SF_HOST_DEVICE constexpr int spread_shared_bytes(int shared, int ctas, int smem_per_sm,
                                                 int reserved_per_cta) {
  if (ctas < 1 || (ctas + 1) * int64_t(shared + reserved_per_cta) > smem_per_sm) return 0;
  const int64_t least = smem_per_sm / (ctas + 1) - reserved_per_cta + 1;
  const int64_t padded = (least + 127) / 128 * 128;
  return padded > kMaxLaunchSharedBytes ? 0 : static_cast<int>(padded);
}
// The weight bytes one warp of a warp-split CTA streams: its share of a split's k-blocks,
// rounded up, of block_bytes each (PackedGeometry::block_bytes: 2 KB int4, 4 KB int8).
SF_HOST_DEVICE constexpr int64_t warp_split_warp_stream_bytes(int64_t k_blocks, int splits,
                                                              int64_t block_bytes,
                                                              int warps = kWarpSplitWarps) {
  const int64_t split_blocks = splits > 0 ? (k_blocks + splits - 1) / splits : k_blocks;
  return (split_blocks + warps - 1) / warps * block_bytes;
}
// Whether the plan pads by default (Options::decode_spread unset). H200, the warp-split kernel
// under programmatic dependent launch:
// - A grid of more CTAs than SMs (an even share of two or more) whose busiest SMs are more than
//   half of them (v46 in docs/perf/decode.md): 256 CTAs of l3-70b.o at M = 1-4 (two an SM where
//   four fit) ran 0.90x padded, l3-70b.down 0.975x, and two clustered splits forced at M = 9-16
//   (two an SM where three fit) 0.73-0.77x. On uneven grids (l3-8b.qkv, 192 CTAs, 60 SMs with
//   two) it lost 2%.
// - A share of one CTA an SM where each warp streams at least kShareOneLongWarpBytes (v49): the
//   padding takes away the room a CTA of the next launch needs to start early, which costs short
//   CTAs more than their uneven placement does (l3-8b.o, 128 CTAs of 16 KB a warp: 1.09-1.21x,
//   int8 32 KB 1.00-1.28x; q7.o 1.06-1.24x), while long ones gain from one an SM (int8
//   14336 x 4096, 128 CTAs of 112 KB a warp: l3-8b.down 0.965-0.974x at M = 1-4, mx.w2 0.970x;
//   at M = 16 two clustered splits, spread, in place of four splits and the reduce kernel,
//   0.969x). A build option (-DSAILFISH_DECODE_SHARE_ONE_WARP_KIB=N; 0 turns it off) for device
//   A/Bs.
#ifndef SAILFISH_DECODE_SHARE_ONE_WARP_KIB
#define SAILFISH_DECODE_SHARE_ONE_WARP_KIB 64
#endif
constexpr int64_t kShareOneLongWarpBytes = int64_t(SAILFISH_DECODE_SHARE_ONE_WARP_KIB) * 1024;
SF_HOST_DEVICE constexpr bool spread_pays(int64_t grid_ctas, int sm_count,
                                          int64_t warp_stream_bytes) {
  if (sm_count < 1 || grid_ctas < 2) return false;
  if (grid_ctas <= sm_count) {
    return kShareOneLongWarpBytes > 0 && warp_stream_bytes >= kShareOneLongWarpBytes;
  }
  const int64_t busiest_sms = grid_ctas - (busiest_sm_ctas(grid_ctas, sm_count) - 1) * sm_count;
  return 2 * busiest_sms > sm_count;
}
// The busiest SM's blocks when `ctas` CTAs of `blocks_per_cta` blocks spread evenly over the SMs.
SF_HOST_DEVICE constexpr int64_t busiest_sm_blocks(int64_t ctas, int64_t blocks_per_cta,
                                                   int sm_count) {
  return busiest_sm_ctas(ctas, sm_count) * blocks_per_cta;
}

}  // namespace sailfish::decode
