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
  SF_RETURN_IF_ERROR(reader.launch(buffer.get(), bytes, stream));  // warm-up
  ReadBandwidth r;
  r.bytes = bytes;
  for (int i = 0; i < reps; ++i) {
    SF_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    SF_RETURN_IF_ERROR(reader.launch(buffer.get(), bytes, stream));
    SF_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    float ms = 0.0f;
    SF_RETURN_IF_ERROR(elapsed_ms(start, stop, &ms));
    r.samples.push_back(static_cast<double>(bytes) / (static_cast<double>(ms) * 1e-3) / 1e12);
  }
  r.tbps = median(r.samples);
  *out = std::move(r);
  return Status();
}

}  // namespace sailfish::bench
