// Host launchers of the repack kernels. Each is defined in its .cu file and explicitly
// instantiated there for the sources of source_readers.h. They only enqueue on `stream` (no
// allocation, no synchronization) and return the launch status; device-side findings about the
// data (ErrorFlag bits) are OR-ed into *error_flags, a device word the caller zeroed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "repack/pack_element.h"
#include "repack/source_readers.h"
#include "sailfish/status.h"

namespace sailfish::repack {

// Writes all layout.total_words words of the packed codes (padding included).
template <class Source>
Status launch_pack_codes(const Source& src, const CodeLayout& layout, uint32_t* words,
                         uint32_t* error_flags, cudaStream_t stream);

// Writes all layout.total_entries scales and, when layout.has_zero, as many zero shifts and as
// many folds (zero_fold's two planes, 2 * total_entries values).
template <class Source>
Status launch_pack_metadata(const Source& src, const MetaLayout& layout, uint16_t* scales,
                            uint16_t* zero_fold, uint32_t* error_flags, cudaStream_t stream);

// Sets kErrorZeroNotBias when any of the groups x n stored GPTQ zero points (convention applied)
// differs from the code bias: the weight is then asymmetric (import_gptq's rule).
Status launch_gptq_zero_scan(const GptqSource& src, int64_t groups, uint32_t* error_flags,
                             cudaStream_t stream);

}  // namespace sailfish::repack
