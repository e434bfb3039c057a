// A downstream project: find_package(sailfish), then pack a weight, serialize it and read it
// back, and sort a small MoE routing into expert blocks (sailfish/moe.h, host API). With the GPU API installed (a CUDA build), it also asks for a plan: without a GPU, plan()
// must come back with a CUDA error Status (never a crash); with one, a plan. A build without CUDA
// installs only the host API, and sailfish/sailfish.h is then absent.
#include <sailfish/packed_format.h>
#include <sailfish/packed_serialize.h>
#include <sailfish/moe.h>
#include <sailfish/quantize.h>

#include <cstdio>
#include <vector>

#if __has_include(<sailfish/sailfish.h>)
#include <sailfish/sailfish.h>
#define CONSUMER_HAS_GPU_API 1
#else
#define CONSUMER_HAS_GPU_API 0
#endif

int main() {
  std::vector<float> weights(64 * 128, 0.25f);
  sailfish::QuantizedWeight quantized;
  sailfish::PackedWeight packed, restored;
  std::vector<uint8_t> bytes;
  if (!sailfish::quantize_rtn(weights.data(), 64, 128, {}, &quantized).ok() ||
      !sailfish::pack(quantized, sailfish::DType::kBF16, &packed).ok() ||
      !sailfish::serialize(packed, &bytes).ok() ||
      !sailfish::deserialize(bytes.data(), bytes.size(), &restored).ok() ||
      restored.codes != packed.codes) {
    std::printf("quantize, pack or the serialized round trip failed\n");
    return 1;
  }
  std::printf("packed %zu bytes, serialized %zu\n", packed.codes.size(), bytes.size());
  sailfish::MoeRouting routing;
  routing.tokens = 2;
  routing.top_k = 2;
  routing.experts = 4;
  routing.topk_ids = {3, 1, 1, 0};
  routing.topk_weights = {0.5f, 0.5f, 0.25f, 0.75f};
  sailfish::MoeAlignment alignment;
  if (!sailfish::moe_align(routing, 8, &alignment).ok() || alignment.blocks() != 3 ||
      alignment.choice_slots != std::vector<int32_t>{16, 8, 9, 0}) {
    std::printf("moe_align failed\n");
    return 1;
  }
#if CONSUMER_HAS_GPU_API
  sailfish::Problem problem;
  problem.m = 1;
  problem.geometry = packed.geometry;
  sailfish::Plan plan;
  const sailfish::Status st = sailfish::plan(problem, -1, sailfish::Options{}, &plan);
  const bool acceptable = st.ok() || st.code() == sailfish::StatusCode::kCudaError;
  std::printf("plan: %s\n", st.to_string().c_str());
  return acceptable ? 0 : 1;
#else
  std::printf("host API only (a build without CUDA)\n");
  return 0;
#endif
}
