#include "weight_set.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <unordered_map>

#include "random_fill.h"
#include "weight_gen.h"

namespace sailfish::bench {

namespace {

size_t align_up(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// Per-word edits that set every padding position (rows >= n or columns >= k) to the code bias, as
// pack() writes it: a kernel may rely on padded codes dequantizing to exactly 0 * scale.
struct WordPatches {
  std::vector<int64_t> index;
  std::vector<uint32_t> keep, set;
};

WordPatches padding_patches(const PackedGeometry& g) {
  std::unordered_map<int64_t, std::pair<uint32_t, uint32_t>> edits;  // word -> (clear, set)
  const uint32_t mask = (1u << g.bits) - 1;
  const uint32_t bias = static_cast<uint32_t>(code_bias(g.bits));
  auto add = [&](int64_t nn, int64_t kk) {
    const int shift = g.lane_position(nn, kk) * g.bits;
    auto& e = edits[g.word_index(nn, kk)];
    e.first |= mask << shift;
    e.second |= bias << shift;
  };
  for (int64_t nn = 0; nn < g.n; ++nn) {
    for (int64_t kk = g.k; kk < g.k_pad; ++kk) add(nn, kk);
  }
  for (int64_t nn = g.n; nn < g.n_pad; ++nn) {
    for (int64_t kk = 0; kk < g.k_pad; ++kk) add(nn, kk);
  }
  WordPatches p;
  p.index.reserve(edits.size());
  for (const auto& e : edits) p.index.push_back(e.first);
  std::sort(p.index.begin(), p.index.end());  // ascending: a friendlier access pattern
  for (int64_t w : p.index) {
    p.keep.push_back(~edits[w].first);
    p.set.push_back(edits[w].second);
  }
  return p;
}

template <typename T>
Status upload(const std::vector<T>& host, DeviceBuffer* dev) {
  SF_RETURN_IF_ERROR(dev->allocate(host.size() * sizeof(T)));
  if (!host.empty()) {
    SF_CUDA_CHECK(cudaMemcpy(dev->get(), host.data(), host.size() * sizeof(T),
                             cudaMemcpyHostToDevice));
  }
  return Status();
}

}  // namespace

Status PackedWeightSet::create(const Spec& spec, int copies, uint64_t seed, cudaStream_t stream,
                               PackedWeightSet* out) {
  if (copies < 1) return invalid_argument("PackedWeightSet: copies must be >= 1");
  const PackedGeometry& g = spec.geometry;
  const bool has_zero = spec.zero_kind != ZeroPointKind::kNone;
  const size_t code_bytes = static_cast<size_t>(g.code_bytes());
  const size_t meta_bytes = static_cast<size_t>(g.scale_rows * g.n_pad) * 2;

  PackedWeightSet s;
  s.spec_ = spec;
  // code_bytes is a multiple of a 64x64 block and meta_bytes of 64 columns x 2 bytes, so the
  // scales start 16-byte aligned and a copy is a whole number of 16-byte vectors.
  s.bytes_per_copy_ = code_bytes + meta_bytes * (has_zero ? 3 : 1);  // + zero shifts and folds
  s.stride_ = align_up(s.bytes_per_copy_, 256);
  SF_RETURN_IF_ERROR(s.storage_.allocate(s.stride_ * static_cast<size_t>(copies)));

  const int64_t live_groups =
      g.group_size == kChannelwise ? 1 : (g.k + g.group_rows - 1) / g.group_rows;
  ScaleFill fill;
  fill.scale_rows = g.scale_rows;
  fill.live_rows = live_groups;
  fill.n = g.n;
  fill.n_pad = g.n_pad;
  fill.bits = g.bits;
  fill.dtype = spec.dtype;

  const WordPatches patches = padding_patches(g);
  DeviceBuffer patch_index, patch_keep, patch_set;
  SF_RETURN_IF_ERROR(upload(patches.index, &patch_index));
  SF_RETURN_IF_ERROR(upload(patches.keep, &patch_keep));
  SF_RETURN_IF_ERROR(upload(patches.set, &patch_set));

  if (spec.act_order) {
    // Any permutation is a valid act-order: it is the stable sort of a balanced g_idx that puts
    // input row perm[r] in group r / group_rows.
    std::vector<int32_t> perm(static_cast<size_t>(g.k));
    for (int64_t i = 0; i < g.k; ++i) perm[static_cast<size_t>(i)] = static_cast<int32_t>(i);
    std::mt19937_64 rng(derive_seed(seed, 0xAC7));
    for (int64_t i = g.k - 1; i > 0; --i) {
      const int64_t j = static_cast<int64_t>(rng() % static_cast<uint64_t>(i + 1));
      std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
    }
    SF_RETURN_IF_ERROR(upload(perm, &s.perm_));
  }

  char* base = s.storage_.as<char>();
  for (int c = 0; c < copies; ++c) {
    char* copy = base + s.stride_ * static_cast<size_t>(c);
    DeviceWeight v;
    v.geometry = g;
    v.scale_dtype = spec.dtype;
    v.zero_kind = spec.zero_kind;
    v.codes = copy;
    v.scales = copy + code_bytes;
    v.zero_fold = has_zero ? copy + code_bytes + meta_bytes : nullptr;
    v.perm = spec.act_order ? s.perm_.as<const int32_t>() : nullptr;
    const uint64_t copy_seed = derive_seed(seed, 0xC0DE, static_cast<uint64_t>(c));
    SF_RETURN_IF_ERROR(fill_random_bytes(copy, code_bytes, copy_seed, stream));
    SF_RETURN_IF_ERROR(apply_word_patches(reinterpret_cast<uint32_t*>(copy),
                                          patch_index.as<const int64_t>(),
                                          patch_keep.as<const uint32_t>(),
                                          patch_set.as<const uint32_t>(),
                                          static_cast<int64_t>(patches.index.size()), stream));
    SF_RETURN_IF_ERROR(fill_scales(fill, copy + code_bytes,
                                   has_zero ? copy + code_bytes + meta_bytes : nullptr,
                                   derive_seed(copy_seed, 0x5CA1E), stream));
    s.views_.push_back(v);
  }
  // The patch buffers die at the end of this scope: finish with them first.
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  *out = std::move(s);
  return Status();
}

const void* PackedWeightSet::copy_begin(int copy) const {
  return storage_.as<const char>() + stride_ * static_cast<size_t>(copy);
}

Status PackedWeightSet::download_first(PackedWeight* host) const {
  if (views_.empty()) return invalid_argument("PackedWeightSet::download_first: empty set");
  return download(views_.front(), host);
}

Status DenseWeightSet::create(int64_t n, int64_t k, DType dtype, int copies, uint64_t seed,
                              cudaStream_t stream, DenseWeightSet* out) {
  if (copies < 1) return invalid_argument("DenseWeightSet: copies must be >= 1");
  DenseWeightSet s;
  s.copies_ = copies;
  s.bytes_per_copy_ = static_cast<size_t>(n * k) * 2;
  s.stride_ = align_up(s.bytes_per_copy_, 256);
  SF_RETURN_IF_ERROR(s.storage_.allocate(s.stride_ * static_cast<size_t>(copies)));
  for (int c = 0; c < copies; ++c) {
    // The magnitude of a dequantized int4 weight with the scales above (|w| up to ~0.23).
    SF_RETURN_IF_ERROR(fill_random_values(s.storage_.as<char>() + s.stride_ * size_t(c), n * k,
                                          dtype, 0.0625f,
                                          derive_seed(seed, 0xDE45E, static_cast<uint64_t>(c)),
                                          stream));
  }
  SF_CUDA_CHECK(cudaStreamSynchronize(stream));
  *out = std::move(s);
  return Status();
}

const void* DenseWeightSet::weight(int copy) const {
  return storage_.as<const char>() + stride_ * static_cast<size_t>(copy);
}

}  // namespace sailfish::bench
