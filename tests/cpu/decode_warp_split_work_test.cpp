// Which blocks each warp of the warp-split kernel streams (src/decode/warp_split_work.h), proven
// on the CPU: over a whole grid, every (strip, k-block) is streamed by exactly one warp, and each
// warp's blocks are one contiguous range in the strip-major order the codes are stored in.
#include <gtest/gtest.h>

#include <vector>

#include "decode/tile_shapes.h"
#include "decode/warp_split_work.h"

namespace sailfish::decode {
namespace {

// Marks the blocks of one warp's work in hits[strip * k_blocks + kb], walking them as the kernel
// does: num_blocks blocks from (first_strip, kb_begin), into the next strip at a strip's end.
void mark(const WarpSplitWork& w, int n_strips, int k_blocks, std::vector<int>& hits) {
  ASSERT_GE(w.num_blocks, 0);
  ASSERT_GE(w.first_strip, 0);
  ASSERT_GE(w.kb_begin, 0);
  ASSERT_LT(w.kb_begin, k_blocks);
  const int64_t first = int64_t(w.first_strip) * k_blocks + w.kb_begin;
  ASSERT_LE(first + w.num_blocks, int64_t(n_strips) * k_blocks);
  for (int64_t u = first; u < first + w.num_blocks; ++u) ++hits[static_cast<size_t>(u)];
}

template <int kWarpCount>
void check_split_grid(int n_strips, int k_blocks, int splits) {
  std::vector<int> hits(static_cast<size_t>(n_strips) * k_blocks, 0);
  for (int strip = 0; strip < n_strips; ++strip) {
    for (int split = 0; split < splits; ++split) {
      int next_kb = static_cast<int>(split_begin(k_blocks, splits, split));
      for (int warp = 0; warp < kWarpCount; ++warp) {
        const WarpSplitWork w = warp_split_work<kWarpCount>(k_blocks, splits, strip, split, warp);
        ASSERT_EQ(w.first_strip, strip);
        // The CTA's warps take its range in warp order, each where the last one stopped.
        ASSERT_EQ(w.kb_begin, next_kb) << "split " << split << " warp " << warp;
        next_kb += w.num_blocks;
        mark(w, n_strips, k_blocks, hits);
      }
      ASSERT_EQ(next_kb, split_begin(k_blocks, splits, split + 1));
    }
  }
  for (size_t u = 0; u < hits.size(); ++u) {
    ASSERT_EQ(hits[u], 1) << "block " << u << " of " << n_strips << " x " << k_blocks << ", "
                          << splits << " splits, " << kWarpCount << " warps";
  }
}

TEST(DecodeWarpSplitWork, SplitGridWarpsTileEveryStripOnce) {
  for (int k_blocks : {1, 3, 4, 7, 64, 65, 224, 448}) {
    for (int splits = 1; splits <= 16; ++splits) {
      check_split_grid<kWarpSplitWarps>(3, k_blocks, splits);
      check_split_grid<kWarpSplitWideWarps>(2, k_blocks, splits);
    }
  }
}

// Stream-K: the clusters' runs tile all strips' flat units once, and a run's first block is the
// (strip, k-block) of its first unit, so walking it strip-major covers exactly its units.
TEST(DecodeWarpSplitWork, StreamKRunsTileEveryStripOnce) {
  for (int n_strips : {1, 5, 96, 100}) {
    for (int k_blocks : {8, 45, 64}) {
      for (int strips = 1; strips <= kStreamKMaxStrips; ++strips) {
        for (int splits = 2; splits <= kMaxClusterSplits; ++splits) {
          std::vector<int> hits(static_cast<size_t>(n_strips) * k_blocks, 0);
          const int clusters = (n_strips + strips - 1) / strips;
          for (int cluster = 0; cluster < clusters; ++cluster) {
            int64_t next = int64_t(cluster) * strips * k_blocks;
            for (int split = 0; split < splits; ++split) {
              for (int warp = 0; warp < kWarpSplitWarps; ++warp) {
                const WarpSplitWork w = warp_split_stream_k_work<kWarpSplitWarps>(
                    k_blocks, splits, n_strips * 64, strips, static_cast<uint32_t>(cluster), split,
                    warp);
                if (w.num_blocks > 0) {
                  ASSERT_EQ(int64_t(w.first_strip) * k_blocks + w.kb_begin, next);
                }
                next += w.num_blocks;
                mark(w, n_strips, k_blocks, hits);
              }
            }
            // The cluster's runs end where its strips end.
            const int64_t cluster_end =
                int64_t(cluster) * strips * k_blocks +
                int64_t(stream_k_cluster_strips(n_strips, strips, cluster)) * k_blocks;
            ASSERT_EQ(next, cluster_end);
          }
          for (size_t u = 0; u < hits.size(); ++u) {
            ASSERT_EQ(hits[u], 1) << "unit " << u << ": " << n_strips << " strips x " << k_blocks
                                  << ", " << strips << " a cluster, " << splits << " ranks";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace sailfish::decode
