// Correctness before timing: a few output elements against a double-precision host reference
// computed from the host copy of the very bytes the GPU read (codes decoded through
// PackedGeometry::word_index / lane_position, scales, zero folds, permutation, activations).
//
// Tolerance, per element (docs/BENCH.md "Correctness"), with u the unit roundoff of the output
// dtype (2^-8 bf16, 2^-11 fp16) and p_k = a_k * w_k the exact products:
//
//   |y - ref| <= 2 u |ref|  +  10 u ||p||_2  +  1e-6
//
// 2u|ref| covers rounding the result to the dtype. The products' own roundings (a kernel may round
// each dequantized weight to the dtype; a split-K epilogue may round partial sums to the dtype
// before adding them) are each at most u times a partial sum; summed with random signs they grow
// like u ||p||_2, and 10 u ||p||_2 leaves >5 standard deviations of headroom for them. A layout or
// metadata bug (a wrong nibble, group, sign or permutation) moves y by O(||p||_2), far outside.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sailfish/packed_format.h"
#include "sailfish/status.h"
#include "sailfish/types.h"

namespace sailfish::bench {

struct Sample {
  int64_t m = 0, n = 0;
};

struct CheckResult {
  bool passed = true;
  int64_t nonfinite = 0;  // NaN/Inf elements of the whole output after the (poisoned) call
  int samples = 0;
  int failures = 0;
  double max_err_over_tol = 0.0;  // worst |y - ref| / tolerance; < 1 passes
  std::string detail;             // the first failure, for the log
};

// The four corners of the output and random elements, count in all (fewer if the output is
// smaller). Deterministic in seed.
std::vector<Sample> pick_samples(int64_t m, int64_t n, int count, uint64_t seed);

double unit_roundoff(DType dtype);

// Where the GPU's inputs and output live. Device pointers; bias on the host (bits) or empty.
struct CheckTarget {
  const void* a = nullptr;  // [m][k]
  const void* y = nullptr;  // [m][n]
  int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::kBF16;
  const std::vector<uint16_t>* bias = nullptr;  // [n] bits of dtype, or null
};

// Rows `rows` of a [*][cols] fp16/bf16 device matrix, converted to double (each fetched once).
Status gather_rows(const void* matrix, int64_t cols, DType dtype, const std::vector<int64_t>& rows,
                   std::map<int64_t, std::vector<double>>* out);
// The output elements at samples, converted to double.
Status gather_outputs(const CheckTarget& target, const std::vector<Sample>& samples,
                      std::vector<double>* out);

// sum_r a[perm[r]] * W[column][r] over the packed weight's rows in double, and the 2-norm of the
// products (the tolerance's ||p||_2). a: one activation row of k.
void packed_column_dot(const PackedWeight& weight, const std::vector<double>& a, int64_t column,
                       double* dot, double* l2);

// Adds one sample's verdict (y against ref, ref's products' 2-norm l2, target's bias added to ref)
// to result, by the tolerance above.
void judge_sample(const CheckTarget& target, const Sample& sample, double y, double ref, double l2,
                  CheckResult* result);

// Against a packed weight (host copy of the copy the GPU used).
Status check_packed(const PackedWeight& weight, const CheckTarget& target,
                    const std::vector<Sample>& samples, CheckResult* result);
// Against a dense [n][k] device weight of dtype (the cuBLAS baseline).
Status check_dense(const void* weight, const CheckTarget& target,
                   const std::vector<Sample>& samples, CheckResult* result);

}  // namespace sailfish::bench
