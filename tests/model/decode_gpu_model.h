// A model of an H200 for the decode planner's device queries (decode/launch.h, DeviceQueries), so
// plan_decode runs on the CPU. The occupancy follows CUDA's rules for sm_90 from each kernel
// instance's registers a thread (tests/sass/decode_registers.json, which the SASS check
// sass.decode_registers keeps equal to the build) and its shared memory. Clusters sit whole in a
// GPC, so the clusters resident at once are counted GPC by GPC.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "decode/launch.h"

namespace sailfish::test {

struct DecodeGpuModel {
  int sm_count = 132;
  int smem_per_sm = 233472;  // 228 KB, the sm_90 carve-out at its largest
  int reserved_smem_per_block = 1024;
  int max_dynamic_smem = 232448;  // 227 KB a block, opted in
  int registers_per_sm = 65536;
  int max_threads_per_sm = 2048;
  int max_ctas_per_sm = 32;
  // Clusters resident at once: sum over the GPCs of floor(SMs / size) x CTAs an SM, as if a
  // cluster's CTAs sat on distinct SMs of one GPC. The H200's 132 SMs are 66 TPCs in 8 GPCs
  // (18 SMs each in full); which TPCs floor sweeping removed is not published. This layout and
  // counting rule are fitted, not measured: of the ones tried, they reproduce the most recorded
  // plans (tests/cpu/decode_plan_test.cpp). Counting CTA slots instead (floor(SMs x CTAs an SM /
  // size)) lets clusters fit that the device refused (l3-70b.o at M = 1: 128 clusters of four;
  // docs/perf/decode.md, v13c). Since v52 it serves only 4 or more CTAs an SM (below).
  std::vector<int> gpc_sms = {18, 18, 18, 16, 16, 16, 16, 14};
  // Clusters of 2 to 8 CTAs resident at once as the H200 itself answered
  // (cudaOccupancyMaxActiveClusters, the GPU test DecodeGpuModelOnDevice.QueriesMatchTheDevice,
  // v52: docs/perf/data/decode_v52_cluster_counts.log), at 1, 2 and 3 CTAs an SM. They replace
  // the GPC rule above where measured: no layout under either counting rule gives all 21 counts
  // (the rule was off by up to 5: 84 clusters of three at two CTAs an SM where the device holds
  // 79, 57 of six at three where it holds 62). The rule stays for 4 or more CTAs an SM.
  std::map<int, std::vector<int>> measured_clusters = {
      {1, {66, 39, 30, 22, 17, 15, 15}},
      {2, {132, 79, 62, 47, 39, 32, 30}},
      {3, {198, 124, 92, 69, 62, 47, 45}},
  };
  // Registers a thread by kernel instance, as check_loop_budget.py names them:
  // "decode_warp_split_kernel<bf16,4,1,0,4,0,4,0>" (the last flag: the MoE instance),
  // "decode_kernel<bf16,4,1>".
  std::map<std::string, int> registers;

  // Reads the registers from the JSON table; an empty map where the file cannot be read.
  static DecodeGpuModel h200(const std::string& registers_json);

  // The instance name of plan d's main kernel for `problem` (its template arguments).
  static std::string instance(const Problem& problem, const DecodePlan& d);
  // CTAs of that instance one SM holds at d.shared_bytes; an error for an instance the table
  // lacks.
  Status ctas_per_sm(const Problem& problem, const DecodePlan& d, int* ctas) const;
  // Clusters of `size` CTAs resident at once.
  Status max_clusters(const Problem& problem, const DecodePlan& d, int size, int* clusters) const;
  // The same for an instance of which an SM holds ctas_per_sm CTAs (the GPC-by-GPC count).
  int clusters_at(int ctas_per_sm, int size) const;
  // The queries plan_decode asks, answered by this model for `problem` (kept by reference).
  decode::DeviceQueries queries(const Problem& problem) const;
};

}  // namespace sailfish::test
