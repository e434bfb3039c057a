#include "spot_check.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "common/cuda_check.h"
#include "sailfish/quantize.h"

namespace sailfish::bench {

Status gather_rows(const void* matrix, int64_t cols, DType dtype, const std::vector<int64_t>& rows,
                   std::map<int64_t, std::vector<double>>* out) {
  std::vector<uint16_t> bits(static_cast<size_t>(cols));
  for (int64_t r : rows) {
    if (out->count(r) != 0) continue;
    const char* src = static_cast<const char*>(matrix) + static_cast<size_t>(r * cols) * 2;
    SF_CUDA_CHECK(cudaMemcpy(bits.data(), src, bits.size() * 2, cudaMemcpyDeviceToHost));
    std::vector<double> values(bits.size());
    for (size_t i = 0; i < bits.size(); ++i) values[i] = bits_to_float(bits[i], dtype);
    (*out)[r] = std::move(values);
  }
  return Status();
}

Status gather_outputs(const CheckTarget& t, const std::vector<Sample>& samples,
                      std::vector<double>* out) {
  out->clear();
  for (const Sample& s : samples) {
    uint16_t bits = 0;
    const char* src = static_cast<const char*>(t.y) + static_cast<size_t>(s.m * t.n + s.n) * 2;
    SF_CUDA_CHECK(cudaMemcpy(&bits, src, 2, cudaMemcpyDeviceToHost));
    out->push_back(bits_to_float(bits, t.dtype));
  }
  return Status();
}

void judge_sample(const CheckTarget& t, const Sample& s, double y, double ref, double l2,
                  CheckResult* result) {
  const double u = unit_roundoff(t.dtype);
  if (t.bias != nullptr) ref += bits_to_float((*t.bias)[static_cast<size_t>(s.n)], t.dtype);
  const double tol = 2.0 * u * std::fabs(ref) + 10.0 * u * l2 + 1e-6;
  const double err = std::fabs(y - ref);
  ++result->samples;
  // Written so that a NaN y fails.
  if (!(err <= tol)) {
    ++result->failures;
    result->passed = false;
    if (result->detail.empty()) {
      char text[200];
      std::snprintf(text, sizeof(text),
                    "y[%lld][%lld] = %.6g, reference %.6g, |diff| %.3g > tol %.3g",
                    static_cast<long long>(s.m), static_cast<long long>(s.n), y, ref, err, tol);
      result->detail = text;
    }
  }
  const double ratio = std::isfinite(err) ? err / tol : INFINITY;
  result->max_err_over_tol = std::max(result->max_err_over_tol, ratio);
}

double unit_roundoff(DType dtype) {
  // 8 significant bits for bf16, 11 for fp16: u = 2^-p.
  return dtype == DType::kBF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
}

std::vector<Sample> pick_samples(int64_t m, int64_t n, int count, uint64_t seed) {
  std::vector<Sample> samples;
  if (count <= 0 || m <= 0 || n <= 0) return samples;
  const Sample corners[4] = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
  for (const Sample& c : corners) {
    const bool dup = std::any_of(samples.begin(), samples.end(),
                                 [&](const Sample& s) { return s.m == c.m && s.n == c.n; });
    if (!dup && static_cast<int>(samples.size()) < count) samples.push_back(c);
  }
  std::mt19937_64 rng(seed);
  const int64_t total = m * n;
  while (static_cast<int>(samples.size()) < count &&
         static_cast<int64_t>(samples.size()) < total) {
    const Sample s{static_cast<int64_t>(rng() % static_cast<uint64_t>(m)),
                   static_cast<int64_t>(rng() % static_cast<uint64_t>(n))};
    const bool dup = std::any_of(samples.begin(), samples.end(),
                                 [&](const Sample& o) { return o.m == s.m && o.n == s.n; });
    if (!dup) samples.push_back(s);
  }
  return samples;
}

void packed_column_dot(const PackedWeight& weight, const std::vector<double>& a, int64_t column,
                       double* dot, double* l2) {
  const PackedGeometry& g = weight.geometry;
  const uint32_t mask = (1u << g.bits) - 1;
  const double bias = code_bias(g.bits);
  const size_t plane = static_cast<size_t>(g.scale_rows * g.n_pad);
  const bool zero = !weight.zero_fold.empty();
  double sum = 0.0, squares = 0.0;
  for (int64_t r = 0; r < g.k; ++r) {  // r: packed row; it holds input row perm[r]
    const size_t byte = static_cast<size_t>(g.word_index(column, r)) * 4;
    const uint32_t word = uint32_t(weight.codes[byte]) | uint32_t(weight.codes[byte + 1]) << 8 |
                          uint32_t(weight.codes[byte + 2]) << 16 |
                          uint32_t(weight.codes[byte + 3]) << 24;
    const uint32_t q = (word >> (g.lane_position(column, r) * g.bits)) & mask;
    const size_t meta = static_cast<size_t>((r / g.group_rows) * g.n_pad + column);
    const double scale = bits_to_float(weight.scales[meta], weight.scale_dtype);
    // Zero points: shift (plane 0, an integer) and fold (plane 1), docs/FORMAT.md.
    const double shift = zero ? static_cast<double>(weight.zero_fold[meta]) : bias;
    const double fold =
        zero ? bits_to_float(weight.zero_fold[plane + meta], weight.scale_dtype) : 0.0;
    const double w = (static_cast<double>(q) - shift) * scale + fold;
    const int64_t source = weight.perm.empty() ? r : weight.perm[static_cast<size_t>(r)];
    const double p = a[static_cast<size_t>(source)] * w;
    sum += p;
    squares += p * p;
  }
  *dot = sum;
  *l2 = std::sqrt(squares);
}

Status check_packed(const PackedWeight& weight, const CheckTarget& target,
                    const std::vector<Sample>& samples, CheckResult* result) {
  const PackedGeometry& g = weight.geometry;
  if (g.k != target.k || g.n != target.n) {
    return internal_error("check_packed: weight is ", g.n, "x", g.k, ", target ", target.n, "x",
                          target.k);
  }
  std::vector<int64_t> rows;
  for (const Sample& s : samples) rows.push_back(s.m);
  std::map<int64_t, std::vector<double>> a_rows;
  SF_RETURN_IF_ERROR(gather_rows(target.a, target.k, target.dtype, rows, &a_rows));
  std::vector<double> y;
  SF_RETURN_IF_ERROR(gather_outputs(target, samples, &y));

  for (size_t i = 0; i < samples.size(); ++i) {
    double ref = 0.0, l2 = 0.0;
    packed_column_dot(weight, a_rows[samples[i].m], samples[i].n, &ref, &l2);
    judge_sample(target, samples[i], y[i], ref, l2, result);
  }
  return Status();
}

Status check_dense(const void* weight, const CheckTarget& target,
                   const std::vector<Sample>& samples, CheckResult* result) {
  std::vector<int64_t> a_wanted, w_wanted;
  for (const Sample& s : samples) {
    a_wanted.push_back(s.m);
    w_wanted.push_back(s.n);
  }
  std::map<int64_t, std::vector<double>> a_rows, w_rows;
  SF_RETURN_IF_ERROR(gather_rows(target.a, target.k, target.dtype, a_wanted, &a_rows));
  SF_RETURN_IF_ERROR(gather_rows(weight, target.k, target.dtype, w_wanted, &w_rows));
  std::vector<double> y;
  SF_RETURN_IF_ERROR(gather_outputs(target, samples, &y));
  for (size_t i = 0; i < samples.size(); ++i) {
    const std::vector<double>& a = a_rows[samples[i].m];
    const std::vector<double>& w = w_rows[samples[i].n];
    double ref = 0.0, l2 = 0.0;
    for (size_t kk = 0; kk < a.size(); ++kk) {
      const double p = a[kk] * w[kk];
      ref += p;
      l2 += p * p;
    }
    judge_sample(target, samples[i], y[i], ref, std::sqrt(l2), result);
  }
  return Status();
}

}  // namespace sailfish::bench
