// Helpers of the MatMulNBitsOp GPU tests (matmul_nbits_op_test.cu,
// matmul_nbits_op_bad_input_test.cu): a MatMulNBits node's constant inputs and the canonical weight
// they import to, the operator made from them, activations exact in the activation type, one run on
// a poisoned output, and the comparison with the float64 reference (the tolerance is
// matmul_nbits_op_test.cu's header's).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_helpers.h"
#include "sailfish/importers.h"
#include "sailfish/matmul_nbits.h"
#include "sailfish/quantize.h"
#include "sailfish/reference.h"
#include "test_helpers.h"

namespace sailfish::testing {

// One MatMulNBits node's constant inputs, and the canonical weight they import to.
struct Node {
  MatMulNBitsAttributes attributes;
  MatMulNBitsTensors tensors;
  QuantizedWeight weight;  // import_matmul_nbits(tensors): what the reference multiplies by
};

inline Node make_node(std::mt19937_64& rng, int64_t n, int64_t k, int bits, int block_size,
                      ZeroPointKind zero_kind, bool g_idx, DType compute, int accuracy_level = 0) {
  RandomWeightSpec spec;
  spec.n = n;
  spec.k = k;
  spec.bits = bits;
  spec.group_size = block_size;
  spec.zero_kind = zero_kind;
  spec.act_order = g_idx;
  spec.scale_dtype = compute;  // scales exact in the compute type, as fp16/bf16 checkpoints have
  Node node;
  const QuantizedWeight w = testing::random_weight(rng, spec);
  EXPECT_TRUE(export_matmul_nbits(w, &node.tensors).ok());
  EXPECT_TRUE(import_matmul_nbits(node.tensors, &node.weight).ok());
  node.attributes.k = k;
  node.attributes.n = n;
  node.attributes.bits = bits;
  node.attributes.block_size = block_size;
  node.attributes.accuracy_level = accuracy_level;
  return node;
}

inline MatMulNBitsWeights views(const MatMulNBitsTensors& t) {
  MatMulNBitsWeights v;
  v.b = t.b.data();
  v.b_bytes = t.b.size();
  v.scales = t.scales.data();
  v.scales_count = t.scales.size();
  v.zero_kind = t.zero_kind;
  if (!t.zero_points_packed.empty()) {
    v.zero_points_packed = t.zero_points_packed.data();
    v.zero_points_packed_bytes = t.zero_points_packed.size();
  }
  if (!t.zero_points_typed.empty()) {
    v.zero_points_typed = t.zero_points_typed.data();
    v.zero_points_typed_count = t.zero_points_typed.size();
  }
  if (!t.g_idx.empty()) {
    v.g_idx = t.g_idx.data();
    v.g_idx_count = t.g_idx.size();
  }
  return v;
}

inline Status create_op(const Node& node, DType a_dtype, const Options& options,
                        std::unique_ptr<MatMulNBitsOp>* op) {
  return MatMulNBitsOp::create(node.attributes, views(node.tensors), a_dtype, options, -1, op);
}

// Activations (or a bias): exact in a 16-bit activation type, raw floats for fp32.
inline std::vector<float> random_values(std::mt19937_64& rng, size_t count, DType a_dtype) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (auto& x : v) x = round_to_dtype(unit(rng), a_dtype);
  return v;
}

// Host floats as the bytes of the activation type.
inline std::vector<uint8_t> as_bytes(const std::vector<float>& v, DType dtype) {
  std::vector<uint8_t> out(v.size() * dtype_bytes(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::kF32) {
      std::memcpy(out.data() + 4 * i, &v[i], 4);
    } else {
      const uint16_t b = float_to_bits(v[i], dtype);
      std::memcpy(out.data() + 2 * i, &b, 2);
    }
  }
  return out;
}

inline std::vector<double> from_bytes(const std::vector<uint8_t>& bytes, DType dtype) {
  std::vector<double> out(bytes.size() / dtype_bytes(dtype));
  for (size_t i = 0; i < out.size(); ++i) {
    if (dtype == DType::kF32) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      out[i] = f;
    } else {
      uint16_t b;
      std::memcpy(&b, bytes.data() + 2 * i, 2);
      out[i] = bits_to_float(b, dtype);
    }
  }
  return out;
}

struct RunOutput {
  Status status;
  std::vector<double> y;
  std::vector<uint8_t> raw;  // the output bytes, for bitwise comparisons
};

// Uploads, runs once on a NaN-poisoned output, downloads. offset_elems shifts A and Y off their
// allocation's alignment (to reach the unaligned paths). The poisoned bytes before Y and 64 rows
// after it must come back untouched, and the workspace starts poisoned too (run() may not rely on
// fresh memory reading as zero).
inline RunOutput run_once(MatMulNBitsOp& op, const std::vector<float>& a, int64_t m,
                          const std::vector<float>* bias, cudaStream_t stream = nullptr,
                          size_t offset_elems = 0) {
  const DType dtype = op.activation_dtype();
  const size_t elem = dtype_bytes(dtype), off = offset_elems * elem;
  const int64_t n = op.attributes().n;
  size_t ws_bytes = 0;
  const Status sized = op.workspace_size(m, bias != nullptr, &ws_bytes);
  if (!sized.ok()) return RunOutput{sized, {}, {}};
  const size_t y_bytes = static_cast<size_t>(m * n) * elem,
               tail = static_cast<size_t>(64 * n) * elem;
  DeviceBuffer d_a(a.size() * elem + off), d_y(off + y_bytes + tail);
  DeviceBuffer d_bias, d_ws(ws_bytes);
  if (ws_bytes > 0) EXPECT_EQ(cudaMemset(d_ws.get(), 0xff, ws_bytes), cudaSuccess);
  const std::vector<uint8_t> a_bytes = as_bytes(a, dtype);
  EXPECT_EQ(cudaMemcpy(static_cast<char*>(d_a.get()) + off, a_bytes.data(), a_bytes.size(),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  if (bias != nullptr) EXPECT_TRUE(d_bias.upload(as_bytes(*bias, dtype)));
  EXPECT_EQ(cudaMemset(d_y.get(), 0xff, d_y.bytes()), cudaSuccess);
  const Status ran = op.run(static_cast<char*>(d_a.get()) + off, m, bias ? d_bias.get() : nullptr,
                            static_cast<char*>(d_y.get()) + off, d_ws.get(), ws_bytes, stream);
  if (!ran.ok()) return RunOutput{ran, {}, {}};
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<uint8_t> all = d_y.download<uint8_t>();
  const auto poisoned = [&](size_t begin, size_t end) {
    return std::all_of(all.begin() + static_cast<std::ptrdiff_t>(begin),
                       all.begin() + static_cast<std::ptrdiff_t>(end),
                       [](uint8_t v) { return v == 0xff; });
  };
  EXPECT_TRUE(poisoned(0, off)) << "run wrote before Y (m=" << m << ", n=" << n << ")";
  EXPECT_TRUE(poisoned(off + y_bytes, all.size()))
      << "run wrote past Y (m=" << m << ", n=" << n << ")";
  RunOutput r;
  r.raw.assign(all.begin() + static_cast<std::ptrdiff_t>(off),
               all.begin() + static_cast<std::ptrdiff_t>(off + y_bytes));
  r.y = from_bytes(r.raw, dtype);
  return r;
}

inline ::testing::AssertionResult matches_reference(const std::vector<double>& y,
                                                    const std::vector<float>& a, int64_t m,
                                                    const QuantizedWeight& w,
                                                    const std::vector<float>* bias, DType a_dtype,
                                                    DType compute) {
  std::vector<double> a64(a.begin(), a.end()), bias64;
  if (bias != nullptr) bias64.assign(bias->begin(), bias->end());
  std::vector<double> ref(static_cast<size_t>(m * w.n));
  const Status st = reference_gemm(a64.data(), m, w, bias ? bias64.data() : nullptr, ref.data());
  if (!st.ok()) return ::testing::AssertionFailure() << "reference: " << st.to_string();
  // The plain same-precision implementation.
  std::vector<float> wq(static_cast<size_t>(w.n * w.k)), aq(a.size());
  for (int64_t nn = 0; nn < w.n; ++nn) {
    for (int64_t kk = 0; kk < w.k; ++kk) {
      wq[nn * w.k + kk] = round_to_dtype(static_cast<float>(w.dequantized(nn, kk)), compute);
    }
  }
  for (size_t i = 0; i < a.size(); ++i) aq[i] = round_to_dtype(a[i], compute);
  double max_error = 0, plain_error = 0, ref_max = 0;
  int64_t unwritten = 0, worst = -1;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t nn = 0; nn < w.n; ++nn) {
      float acc = 0.0f;
      for (int64_t kk = 0; kk < w.k; ++kk) acc += aq[i * w.k + kk] * wq[nn * w.k + kk];
      const float b = bias ? (*bias)[nn] : 0.0f;
      const double plain = a_dtype == DType::kF32 ? double(round_to_dtype(acc, compute) + b)
                                                  : double(round_to_dtype(acc + b, compute));
      const size_t idx = static_cast<size_t>(i * w.n + nn);
      ref_max = std::max(ref_max, std::abs(ref[idx]));
      plain_error = std::max(plain_error, std::abs(plain - ref[idx]));
      if (std::isnan(y[idx])) {
        ++unwritten;
        continue;
      }
      const double e = std::abs(y[idx] - ref[idx]);
      if (e > max_error) max_error = e, worst = static_cast<int64_t>(idx);
    }
  }
  const double ulp = compute == DType::kBF16 ? 1.0 / 128 : 1.0 / 1024;
  const double atol = 1e-6 + 0.25 * ulp * ref_max;
  if (unwritten > 0) {
    return ::testing::AssertionFailure() << unwritten << " output elements unwritten (NaN)";
  }
  if (max_error > 2 * plain_error + atol) {
    return ::testing::AssertionFailure()
           << "max error " << max_error << " at row " << worst / w.n << " col " << worst % w.n
           << " > 2 x plain " << plain_error << " + atol " << atol;
  }
  return ::testing::AssertionSuccess()
         << "max error " << max_error << " (plain " << plain_error << ")";
}

// Whether a plan is one MatMulNBitsOp::tune installed.
inline bool is_tuned(const Plan& p) { return p.reason.rfind("tuned: ", 0) == 0; }

}  // namespace sailfish::testing
