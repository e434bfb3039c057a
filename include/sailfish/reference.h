// Reference GEMM in double precision: the oracle every GPU path is checked against.
#pragma once

#include <cstdint>
#include <vector>

#include "sailfish/quantized_weight.h"

namespace sailfish {

// W[n][k] in double, by QuantizedWeight::dequantized; empty when validate(w) refuses the weight.
std::vector<double> dequantize_reference(const QuantizedWeight& w);

// Y[m][n] = sum_k A[m][k] * W[n][k] (+ bias[n]). a: [m][w.k], bias: [w.n] or null, y: [m][w.n].
Status reference_gemm(const double* a, int64_t m, const QuantizedWeight& w, const double* bias,
                      double* y);

}  // namespace sailfish
