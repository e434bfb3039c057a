#include "read_bandwidth.h"

#include "random_fill.h"
#include "stats.h"

namespace sailfish::bench {

Status measure_read_bandwidth(const StreamReader& reader, size_t bytes, int reps, uint64_t seed,
                              cudaStream_t stream, ReadBandwidth* out) {
  bytes = bytes / 256 * 256;
  if (bytes == 0 || reps < 1) return invalid_argument("measure_read_bandwidth: nothing to do");
  DeviceBuffer buffer;
  SF_RETURN_IF_ERROR(buffer.allocate(bytes));
  SF_RETURN_IF_ERROR(fill_random_bytes(buffer.get(), bytes, seed, stream));
  CudaEvent start, stop;
  SF_RETURN_IF_ERROR(start.create());
  SF_RETURN_IF_ERROR(stop.create());
  ReadBandwidth best;
  best.bytes = bytes;
  for (const FloorLoads loads : kFloorLoadForms) {
    FloorLaunch how;
    how.loads = loads;
    SF_RETURN_IF_ERROR(reader.launch(buffer.get(), bytes, stream, how));  // warm-up
    std::vector<double> samples;
    for (int i = 0; i < reps; ++i) {
      SF_CUDA_CHECK(cudaEventRecord(start.get(), stream));
      SF_RETURN_IF_ERROR(reader.launch(buffer.get(), bytes, stream, how));
      SF_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
      float ms = 0.0f;
      SF_RETURN_IF_ERROR(elapsed_ms(start, stop, &ms));
      samples.push_back(static_cast<double>(bytes) / (static_cast<double>(ms) * 1e-3) / 1e12);
    }
    const double tbps = median(samples);
    best.medians.emplace_back(floor_loads_name(loads), tbps);
    if (tbps > best.tbps) {
      best.tbps = tbps;
      best.samples = std::move(samples);
      best.form = floor_loads_name(loads);
    }
  }
  *out = std::move(best);
  return Status();
}

}  // namespace sailfish::bench
