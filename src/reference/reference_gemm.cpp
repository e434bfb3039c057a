#include "sailfish/reference.h"

#include <vector>

#include "common/parallel_rows.h"

namespace sailfish {

std::vector<double> dequantize_reference(const QuantizedWeight& w) {
  // Codes, scales and g_idx are read at the indices the shape implies: a malformed weight would
  // read past them.
  if (!validate(w).ok()) return {};
  std::vector<double> out(static_cast<size_t>(w.n * w.k));
  for (int64_t nn = 0; nn < w.n; ++nn) {
    for (int64_t kk = 0; kk < w.k; ++kk) {
      out[static_cast<size_t>(nn * w.k + kk)] = w.dequantized(nn, kk);
    }
  }
  return out;
}

Status reference_gemm(const double* a, int64_t m, const QuantizedWeight& w, const double* bias,
                      double* y) {
  SF_RETURN_IF_ERROR(validate(w));
  if (m < 0) return invalid_argument("m is ", m, "; must be >= 0");
  if (m > 0 && (a == nullptr || y == nullptr)) {
    return invalid_argument("reference_gemm: a and y must be non-null when m > 0");
  }
  if (m == 0) return Status();
  // One weight row at a time, dequantized into a buffer of k (not the whole n x k in double: 1.1 GB
  // on a 5120 x 27648 layer), each output summed in k order, the rows spread over threads.
  detail::parallel_rows(w.n, m * w.k, [&](int64_t row_begin, int64_t row_end) {
    std::vector<double> wrow(static_cast<size_t>(w.k));
    for (int64_t nn = row_begin; nn < row_end; ++nn) {
      for (int64_t kk = 0; kk < w.k; ++kk) wrow[static_cast<size_t>(kk)] = w.dequantized(nn, kk);
      for (int64_t i = 0; i < m; ++i) {
        const double* arow = a + i * w.k;
        double acc = 0.0;
        for (int64_t kk = 0; kk < w.k; ++kk) acc += arow[kk] * wrow[static_cast<size_t>(kk)];
        y[i * w.n + nn] = acc + (bias ? bias[nn] : 0.0);
      }
    }
  });
  return Status();
}

}  // namespace sailfish
