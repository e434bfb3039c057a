// sailfish_selfcheck: the CPU reference self-check (README's main job on a machine without a GPU).
// For every bit width, group size, zero-point kind and act-order setting it quantizes random
// weights, packs and unpacks them, round-trips them through every checkpoint format that can hold
// them, and checks the reference GEMM against the dequantized weights. Prints a table; exits 1 on
// any failure.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sailfish/importers.h"
#include "sailfish/packed_format.h"
#include "sailfish/quantize.h"
#include "sailfish/reference.h"

namespace {

using namespace sailfish;

struct Row {
  std::string name;
  bool ok;
  std::string detail;
};

// Round trips through each checkpoint format that can represent w; returns the formats checked.
std::string check_importers(const QuantizedWeight& w, bool* ok) {
  std::string done;
  GptqTensors gptq;
  if (w.zero_kind != ZeroPointKind::kFloat && w.n % (32 / w.bits) == 0 && w.k % (32 / w.bits) == 0 &&
      export_gptq(w, GptqZeroConvention::kV1MinusOne, &gptq).ok()) {
    QuantizedWeight back;
    *ok &= import_gptq(gptq, &back).ok() && back.codes == w.codes && back.scales == w.scales;
    done += "gptq ";
  }
  AwqTensors awq;
  if (w.bits == 4 && w.zero_kind == ZeroPointKind::kInteger && w.g_idx.empty() && w.n % 8 == 0 &&
      export_awq(w, &awq).ok()) {
    QuantizedWeight back;
    *ok &= import_awq(awq, &back).ok() && back == w;
    done += "awq ";
  }
  MatMulNBitsTensors mnb;
  if (w.group_size != kChannelwise && export_matmul_nbits(w, &mnb).ok()) {
    QuantizedWeight back;
    *ok &= import_matmul_nbits(mnb, &back).ok() && back == w;
    done += "matmul_nbits ";
  }
  return done;
}

Row check_one(std::mt19937_64& rng, int bits, int group_size, QuantScheme scheme, bool act_order) {
  const int64_t n = 72, k = 320, m = 3;
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> dense(static_cast<size_t>(n * k));
  for (auto& v : dense) v = normal(rng);
  QuantizeOptions options;
  options.bits = bits;
  options.group_size = group_size;
  options.scheme = scheme;
  QuantizedWeight w;
  Row row;
  row.name = "int" + std::to_string(bits) + " g" + std::to_string(group_size) +
             (scheme == QuantScheme::kSymmetric ? " sym " : " asym") +
             (act_order ? " act-order" : "          ");
  Status st = quantize_rtn(dense.data(), n, k, options, &w);
  if (!st.ok()) return row.ok = false, row.detail = st.to_string(), row;
  if (act_order && group_size != kChannelwise) {
    // A balanced random group assignment, as GPTQ's act-order produces.
    w.g_idx.resize(static_cast<size_t>(k));
    for (int64_t kk = 0; kk < k; ++kk) w.g_idx[kk] = static_cast<int32_t>(kk / group_size);
    std::shuffle(w.g_idx.begin(), w.g_idx.end(), rng);
  }
  bool ok = true;
  PackedWeight packed;
  QuantizedWeight unpacked;
  ok &= pack(w, DType::kBF16, &packed).ok() && unpack(packed, &unpacked).ok() && unpacked == w;
  const std::string formats = check_importers(w, &ok);

  std::vector<double> a(static_cast<size_t>(m * k)), y(static_cast<size_t>(m * n));
  std::uniform_real_distribution<double> unit(-1, 1);
  for (auto& v : a) v = unit(rng);
  ok &= reference_gemm(a.data(), m, w, nullptr, y.data()).ok();
  double max_diff = 0;  // against a direct sum over dequantized weights
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t nn = 0; nn < n; ++nn) {
      double acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) acc += a[i * k + kk] * w.dequantized(nn, kk);
      max_diff = std::max(max_diff, std::abs(acc - y[i * n + nn]));
    }
  }
  ok &= max_diff == 0.0;
  row.ok = ok;
  row.detail = "pack/unpack, " + formats + "round trips, reference GEMM";
  return row;
}

}  // namespace

int main() {
  std::mt19937_64 rng(std::random_device{}());
  std::vector<Row> rows;
  for (int bits : {4, 8}) {
    for (int group_size : {16, 32, 64, 128, 256, kChannelwise}) {
      for (QuantScheme scheme : {QuantScheme::kSymmetric, QuantScheme::kAsymmetric}) {
        for (bool act_order : {false, true}) {
          if (act_order && group_size == kChannelwise) continue;
          rows.push_back(check_one(rng, bits, group_size, scheme, act_order));
        }
      }
    }
  }
  int failed = 0;
  std::printf("%-32s %-6s %s\n", "case", "result", "checked");
  for (const Row& r : rows) {
    std::printf("%-32s %-6s %s\n", r.name.c_str(), r.ok ? "ok" : "FAIL", r.detail.c_str());
    failed += r.ok ? 0 : 1;
  }
  std::printf("selfcheck: %zu passed, %d failed\n", rows.size() - failed, failed);
  return failed == 0 ? 0 : 1;
}
