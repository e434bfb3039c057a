// The cold-weight rotation of docs/BENCH.md ("Cold weights"): how many weight copies a row needs
// and how many calls its graph holds. Pure host arithmetic, shared by sailfish_bench and
// sailfish_moe_bench and unit-tested on the CPU (tests/cpu/bench_method_test.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace sailfish::bench {

// Copies whose total exceeds factor * l2_bytes: floor(factor * l2 / bytes) + 1, then capped by
// max_copies (memory) and at least 1. With one copy larger than factor * L2, one copy is cold.
// `bytes_per_copy` is what one call reads of a copy (for a MoE row: the touched experts only).
inline int cold_copies(size_t bytes_per_copy, int64_t l2_bytes, double factor, int max_copies) {
  if (bytes_per_copy == 0) return 1;
  const double target = factor * static_cast<double>(l2_bytes);
  const double wanted = std::floor(target / static_cast<double>(bytes_per_copy)) + 1.0;
  return static_cast<int>(std::max(1.0, std::min(wanted, static_cast<double>(max_copies))));
}

// Calls per graph: at least `requested` and at least one per copy, rounded up to a whole number
// of rotations. Call i reads copy i % copies; with a partial last rotation the next replay would
// start over at copy 0 while the copies of that partial rotation were just read, so the first
// calls of every replay would find their copy only (launches % copies) copies back: for
// l3-70b.o (6 copies of 34.6 MB, 20 calls) copy 0 came back after 69 MB, not the 208 MB set.
inline int rotation_launches(int requested, int copies) {
  copies = std::max(copies, 1);
  const int at_least = std::max(requested, copies);
  return (at_least + copies - 1) / copies * copies;
}

// The fewest distinct copies a call's copy has to share the L2 with since its previous use
// (itself included), over back-to-back replays of a graph of `launches` calls on copy
// i % copies. The rotation is cold when this times the bytes a call reads exceeds factor * L2.
inline int min_reuse_copies(int launches, int copies) {
  if (copies <= 1 || launches < 1) return 1;
  int best = copies;
  // Calls of two consecutive replays: the copy of call j is j % launches % copies.
  for (int j = launches; j < 2 * launches; ++j) {
    const int copy = (j % launches) % copies;
    for (int back = 1; back <= launches; ++back) {
      if (((j - back) % launches) % copies == copy) {
        best = std::min(best, back);
        break;
      }
    }
  }
  return best;
}

}  // namespace sailfish::bench
