// The cold-weight rotation of a sailfish_moe_bench row (docs/BENCH.md, "sailfish_moe_bench"):
// copies of the whole expert set, as many as it takes for the bytes the calls actually read (the
// experts the routing touches) to exceed factor x the L2 between two uses of a copy. Pure host
// arithmetic, unit-tested on the CPU (tests/cpu/bench_method_test.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "rotation.h"
#include "sailfish/packed_format.h"

namespace sailfish::bench {

// Codes + scales of one expert (int4/int8, no zero points: what the bench generates).
inline size_t moe_expert_bytes(const PackedGeometry& g) {
  return static_cast<size_t>(g.code_bytes() + g.scale_rows * g.n_pad * 2);
}

// One copy of the whole expert set as make_experts lays it out: every expert's codes, then every
// expert's scales, the copy padded to 256 bytes.
inline size_t moe_set_stride_bytes(const PackedGeometry& g, int experts) {
  return (moe_expert_bytes(g) * static_cast<size_t>(experts) + 255) / 256 * 256;
}

struct MoeRotation {
  int copies = 1;       // expert sets allocated and rotated
  int launches = 1;     // calls per graph: whole rotations, at least the requested count
  int wanted = 1;       // copies the L2 asked for; more than `copies` when memory ran short
};

// read_bytes: what one call reads of a copy (the touched experts; for the cuBLAS baseline, their
// bf16 weights). alloc_bytes: what one copy occupies (the whole set, or the touched bf16 weights).
// budget_bytes: device memory the copies may take together.
inline MoeRotation moe_rotation(size_t read_bytes, size_t alloc_bytes, int64_t l2_bytes,
                                double factor, size_t budget_bytes, int requested_launches) {
  constexpr int kMaxCopies = 4096;
  MoeRotation r;
  r.wanted = cold_copies(read_bytes, l2_bytes, factor, kMaxCopies);
  const size_t affordable = alloc_bytes == 0 ? size_t(kMaxCopies) : budget_bytes / alloc_bytes;
  r.copies = static_cast<int>(std::max<size_t>(1, std::min<size_t>(size_t(r.wanted), affordable)));
  r.launches = rotation_launches(requested_launches, r.copies);
  return r;
}

}  // namespace sailfish::bench
