#include "decode_gpu_model.h"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "decode/config.h"

namespace sailfish::test {

DecodeGpuModel DecodeGpuModel::h200(const std::string& registers_json) {
  DecodeGpuModel model;
  std::ifstream in(registers_json);
  if (!in) return model;
  const nlohmann::json table = nlohmann::json::parse(in, nullptr, false);
  if (!table.is_object()) return model;
  for (const auto& [name, value] : table.items()) {
    if (value.is_number_integer()) model.registers[name] = value.get<int>();
  }
  return model;
}

std::string DecodeGpuModel::instance(const Problem& problem, const DecodePlan& d) {
  const std::string dtype = problem.act_dtype == DType::kF16 ? "fp16" : "bf16";
  const int bits = problem.geometry.bits;
  if (!d.warp_split) {
    return "decode_kernel<" + dtype + "," + std::to_string(bits) + "," +
           std::to_string(d.token_tiles) + ">";
  }
  // The stage count the instance is built with (kernel_instances.cuh, dispatch): 3-4 token tiles
  // vary theirs at run time in the kStages instance; 1-2 have an instance per deep count.
  int stages = decode::kStages;
  if (!decode::warp_split_stages_vary(d.token_tiles) &&
      (d.warp_stages == decode::warp_split_deep_stages(d.token_tiles) ||
       d.warp_stages == decode::warp_split_lighter_deep_stages(bits, d.token_tiles))) {
    stages = d.warp_stages;
  }
  const bool zero = problem.zero_kind != ZeroPointKind::kNone;
  return "decode_warp_split_kernel<" + dtype + "," + std::to_string(bits) + "," +
         std::to_string(d.token_tiles) + "," + (zero ? "1" : "0") + "," +
         std::to_string(stages) + "," + (d.stream_k_strips > 0 ? "1" : "0") + "," +
         std::to_string(d.warps) + "," + (d.moe ? "1" : "0") + ">";
}

Status DecodeGpuModel::ctas_per_sm(const Problem& problem, const DecodePlan& d,
                                   int* ctas) const {
  const std::string name = instance(problem, d);
  const auto found = registers.find(name);
  if (found == registers.end()) {
    return internal_error("the GPU model has no registers for ", name);
  }
  if (d.shared_bytes > max_dynamic_smem) {
    *ctas = 0;
    return Status();
  }
  const int threads = d.warp_split ? d.warps * 32 : decode::kThreads;
  const int warps = threads / 32;
  // sm_90: registers are allocated a warp at a time in units of 256.
  const int warp_registers = (found->second * 32 + 255) / 256 * 256;
  const int by_registers = registers_per_sm / warp_registers / warps;
  const int by_smem = smem_per_sm / (d.shared_bytes + reserved_smem_per_block);
  const int by_threads = max_threads_per_sm / threads;
  *ctas = std::min({by_registers, by_smem, by_threads, max_ctas_per_sm});
  return Status();
}

Status DecodeGpuModel::max_clusters(const Problem& problem, const DecodePlan& d, int size,
                                    int* clusters) const {
  int ctas = 0;
  SF_RETURN_IF_ERROR(ctas_per_sm(problem, d, &ctas));
  *clusters = clusters_at(ctas, size);
  return Status();
}

int DecodeGpuModel::clusters_at(int ctas_per_sm, int size) const {
  const auto measured = measured_clusters.find(ctas_per_sm);
  if (measured != measured_clusters.end() && size >= 2 &&
      size < 2 + static_cast<int>(measured->second.size())) {
    return measured->second[static_cast<size_t>(size - 2)];
  }
  int clusters = 0;
  for (const int sms : gpc_sms) clusters += sms / size * ctas_per_sm;
  return clusters;
}

decode::DeviceQueries DecodeGpuModel::queries(const Problem& problem) const {
  decode::DeviceQueries q;
  q.compute_major = 9;
  q.smem_per_sm = smem_per_sm;
  q.reserved_smem_per_block = reserved_smem_per_block;
  q.ctas_per_sm = [this, &problem](const DecodePlan& d, int* ctas) {
    return ctas_per_sm(problem, d, ctas);
  };
  q.max_clusters = [this, &problem](const DecodePlan& d, int size, int* clusters) {
    return max_clusters(problem, d, size, clusters);
  };
  return q;
}

}  // namespace sailfish::test
