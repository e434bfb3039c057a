// Rotating copies of the weights a row streams: enough of them that their total exceeds a few
// times the L2 (cold weights, DESIGN.md "How figures are taken"). Each set is one allocation.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "device_buffer.h"
#include "rotation.h"  // cold_copies
#include "sailfish/packed_format.h"
#include "sailfish/sailfish.h"

namespace sailfish::bench {

// Quantized weights: each copy is [codes][scales][zero folds], one contiguous run of exactly the
// bytes a kernel must read, so the floor kernel can stream a copy in one sweep. The act-order
// permutation (if any) is one buffer shared by every copy.
class PackedWeightSet {
 public:
  struct Spec {
    PackedGeometry geometry;
    DType dtype = DType::kBF16;
    ZeroPointKind zero_kind = ZeroPointKind::kNone;
    bool act_order = false;
  };

  // Random codes, random scales (and zero folds), padding written as the packer writes it, a
  // random permutation for act-order. Synchronizes the stream.
  static Status create(const Spec& spec, int copies, uint64_t seed, cudaStream_t stream,
                       PackedWeightSet* out);

  int copies() const { return static_cast<int>(views_.size()); }
  const DeviceWeight& weight(int copy) const { return views_[static_cast<size_t>(copy)]; }
  // Codes + scales + zero folds of one copy: what a kernel streams per call.
  size_t bytes_per_copy() const { return bytes_per_copy_; }
  const void* copy_begin(int copy) const;
  // Copy 0 back to the host (codes, scales, zero folds, perm) for the reference check.
  Status download_first(PackedWeight* host) const;

 private:
  Spec spec_;
  DeviceBuffer storage_;
  DeviceBuffer perm_;
  std::vector<DeviceWeight> views_;
  size_t stride_ = 0;
  size_t bytes_per_copy_ = 0;
};

// Unquantized [N][K] weights in the activation dtype for the cuBLAS baseline.
class DenseWeightSet {
 public:
  static Status create(int64_t n, int64_t k, DType dtype, int copies, uint64_t seed,
                       cudaStream_t stream, DenseWeightSet* out);
  int copies() const { return copies_; }
  const void* weight(int copy) const;
  size_t bytes_per_copy() const { return bytes_per_copy_; }

 private:
  DeviceBuffer storage_;
  int copies_ = 0;
  size_t stride_ = 0;
  size_t bytes_per_copy_ = 0;
};

}  // namespace sailfish::bench
