// Prefill tier work schedule: which (tile, k-range) pieces each persistent CTA computes, in one of
// two forms, usable on host and device so CPU tests can prove them.
//
// Split grid (the default form): units (n tile, m tile, split) in unit_coord order, CTA c taking
// units c, c + grid, ...; every split of a tile writes fp32 partials that reduce_kernel sums.
//
// Stream-K: the tiles' k-blocks laid end to end, T = tiles x k_blocks iterations (tile-major,
// tiles in unit_coord order with one split), and CTA c takes the run [T c / grid, T (c+1) / grid).
// Every CTA then does the same work within one k-block, where the split grid leaves the SMs of
// the last, partial wave idle: l3-70b.gate_up at M = 64 has 448 tiles of 128 k-blocks for 264
// CTAs, 1.7 waves, so the busiest CTAs step 256 k-blocks against an average of 217. A run covers
// whole tiles, which its CTA stores like an unsplit unit (bias included), and at most two pieces
// of tiles it shares with neighbouring CTAs: its first piece (slot 2c) and its last (slot 2c + 1)
// go to fp32 partials, [slot][tokens][128 rows], and stream_k_fixup_kernel sums each shared
// tile's pieces in CTA order (deterministic: no atomics) and adds the bias once.
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "prefill/config.h"

namespace sailfish::prefill {

// One piece of a CTA's work: k-blocks [kb_begin, kb_end) of tile `unit`; slot < 0 means the piece
// is the whole tile (stored to Y), else its partials go to Stream-K slot `slot`.
struct WorkPiece {
  UnitCoord unit;
  int kb_begin, kb_end;
  int slot;
};

// The CTA whose Stream-K run holds flat iteration `it`: the largest c with T c / grid <= it,
// which is never an empty run's CTA (its successor starts at the same iteration).
SF_HOST_DEVICE constexpr int stream_k_owner(int64_t it, int64_t total, int grid) {
  return static_cast<int>(((it + 1) * grid - 1) / total);
}

// The slot CTA `cta` writes its piece of `tile` to: 2 cta when the piece is the CTA's first
// (its run starts inside or at the start of the tile), else 2 cta + 1 (the run's last piece).
SF_HOST_DEVICE constexpr int stream_k_slot(int cta, int tile, int k_blocks, int64_t total,
                                          int grid) {
  return 2 * cta + (split_begin(total, grid, cta) >= int64_t(tile) * k_blocks ? 0 : 1);
}

// The shared tile whose fixup boundary `boundary` (1 .. grid - 1, the start of CTA boundary's run)
// does: the tile the boundary falls inside, when it is that tile's first boundary; else -1 (the
// boundary lies between two tiles, or an earlier boundary sums the tile).
SF_HOST_DEVICE constexpr int stream_k_boundary_tile(int boundary, int64_t total, int grid,
                                                   int k_blocks) {
  const int64_t at = split_begin(total, grid, boundary);
  const int tile = static_cast<int>(at / k_blocks);
  return at % k_blocks != 0 && stream_k_owner(int64_t(tile) * k_blocks, total, grid) == boundary - 1
             ? tile
             : -1;
}

// A CTA's walk over its pieces. The kernel's producer and consumers each run one, so they agree
// on every piece without talking.
class WorkSchedule {
 public:
  SF_HOST_DEVICE WorkSchedule(int n_tiles, int m_tiles, int k_blocks, int splits, bool stream_k,
                              int cta, int grid)
      : n_tiles_(n_tiles), m_tiles_(m_tiles), k_blocks_(k_blocks), splits_(splits),
        stream_k_(stream_k), cta_(cta), grid_(grid) {
    if (stream_k_) {
      const int64_t total = int64_t(n_tiles) * m_tiles * k_blocks;
      cursor_ = static_cast<int>(split_begin(total, grid, cta));
      end_ = static_cast<int>(split_begin(total, grid, cta + 1));
      first_ = true;
    } else {
      cursor_ = cta;
      end_ = n_tiles * m_tiles * splits;
    }
  }

  // The next piece, or false when the CTA is done.
  SF_HOST_DEVICE bool next(WorkPiece* piece) {
    if (cursor_ >= end_) return false;
    if (!stream_k_) {
      piece->unit = unit_coord(cursor_, n_tiles_, m_tiles_);
      piece->kb_begin = static_cast<int>(split_begin(k_blocks_, splits_, piece->unit.split));
      piece->kb_end = static_cast<int>(split_begin(k_blocks_, splits_, piece->unit.split + 1));
      piece->slot = -1;
      cursor_ += grid_;
      return true;
    }
    const int tile = cursor_ / k_blocks_;
    const int kb_begin = cursor_ - tile * k_blocks_;
    const int kb_end = end_ - cursor_ < k_blocks_ - kb_begin ? kb_begin + (end_ - cursor_)
                                                             : k_blocks_;
    piece->unit = unit_coord(tile, n_tiles_, m_tiles_);
    piece->kb_begin = kb_begin;
    piece->kb_end = kb_end;
    piece->slot = kb_begin == 0 && kb_end == k_blocks_ ? -1 : 2 * cta_ + (first_ ? 0 : 1);
    cursor_ += kb_end - kb_begin;
    first_ = false;
    return true;
  }

 private:
  int n_tiles_, m_tiles_, k_blocks_, splits_;
  bool stream_k_;
  int cta_, grid_;
  int cursor_ = 0, end_ = 0;  // unit index (split grid) or flat iteration (Stream-K)
  bool first_ = false;
};

// Partial slots of a Stream-K grid and the floats of one (a tile: tokens x 128 rows).
SF_HOST_DEVICE constexpr int64_t stream_k_slots(int grid) { return 2 * int64_t(grid); }
SF_HOST_DEVICE constexpr int64_t stream_k_slot_floats(int tokens) { return int64_t(tokens) * 128; }

// Estimated time of a Stream-K grid, in the units of estimate_ns (config.h): the busiest CTA's
// k-blocks at the width's step time, plus every slot's partials written and read back at the
// split grid's kPartialsBytesPerNs. Measured on the H200 (perf/prefill.md, v16): on the Llama-3
// shapes the calls ran 4.1-15.5 us over the first term at 64 and 128 tokens (17.3 MB of slots,
// 11.5 us in the model) and 9.1-23.4 us at 256 (34.6 MB, 23 us in the model), the fixup's
// launch included. The grid is one CTA per slot of the SMs, or T when smaller.
SF_HOST_DEVICE constexpr int stream_k_grid(int64_t total, int sm_count, int tokens) {
  return total < int64_t(sm_count) * ctas_per_sm(tokens) ? static_cast<int>(total)
                                                          : sm_count * ctas_per_sm(tokens);
}
SF_HOST_DEVICE constexpr double estimate_stream_k_ns(int64_t tiles, int64_t k_blocks,
                                                     int sm_count, int tokens) {
  const int64_t total = tiles * k_blocks;
  const int grid = stream_k_grid(total, sm_count, tokens);
  const int64_t steps = (total + grid - 1) / grid;
  return double(steps) * step_ns(tokens) +
         double(stream_k_slots(grid) * stream_k_slot_floats(tokens)) * 8.0 / kPartialsBytesPerNs;
}

// Whether the cost model takes Stream-K over the split grid it chose (`split`, for the same
// width). Only with one m tile: with several, the CTAs working at the same moment would sit at
// unrelated points of the tile order, and the panels' sharing of weights in L2 (config.h:
// kPanelTiles) would be lost. Runs must average kMinBlocksPerSplit k-blocks, as splits must, and
// the flat iteration count must fit the kernel's 32-bit cursors.
SF_HOST_DEVICE constexpr bool stream_k_eligible(int64_t n_tiles, int64_t m_tiles,
                                                int64_t k_blocks, int sm_count, int tokens) {
  return m_tiles == 1 && n_tiles * k_blocks <= 0x7fffffff &&
         n_tiles * k_blocks >= int64_t(sm_count) * ctas_per_sm(tokens) * kMinBlocksPerSplit;
}
SF_HOST_DEVICE constexpr bool prefer_stream_k(int64_t n_tiles, int64_t m, int64_t n_pad,
                                              int64_t k_blocks, int sm_count, TileChoice split) {
  const int64_t m_tiles = (m + split.tokens - 1) / split.tokens;
  return stream_k_eligible(n_tiles, m_tiles, k_blocks, sm_count, split.tokens) &&
         estimate_stream_k_ns(n_tiles * m_tiles, k_blocks, sm_count, split.tokens) <
             estimate_ns(n_tiles, m, n_pad, k_blocks, sm_count, split.tokens, split.splits);
}

}  // namespace sailfish::prefill
