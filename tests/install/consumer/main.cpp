// A downstream project: find_package(sailfish), then pack a weight and ask for a plan. Without a
// GPU, plan() must come back with a CUDA error Status (never a crash); with one, a plan.
#include <sailfish/packed_format.h>
#include <sailfish/quantize.h>
#include <sailfish/sailfish.h>

#include <cstdio>
#include <vector>

int main() {
  std::vector<float> weights(64 * 128, 0.25f);
  sailfish::QuantizedWeight quantized;
  sailfish::PackedWeight packed;
  if (!sailfish::quantize_rtn(weights.data(), 64, 128, {}, &quantized).ok() ||
      !sailfish::pack(quantized, sailfish::DType::kBF16, &packed).ok()) {
    std::printf("quantize or pack failed\n");
    return 1;
  }
  sailfish::Problem problem;
  problem.m = 1;
  problem.geometry = packed.geometry;
  sailfish::Plan plan;
  const sailfish::Status st = sailfish::plan(problem, -1, sailfish::Options{}, &plan);
  const bool acceptable = st.ok() || st.code() == sailfish::StatusCode::kCudaError;
  std::printf("packed %zu bytes; plan: %s\n", packed.codes.size(), st.to_string().c_str());
  return acceptable ? 0 : 1;
}
