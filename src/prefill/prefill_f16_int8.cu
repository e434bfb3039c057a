// Prefill kernel instances for f16 activations, int8 weights (see kernel_instances.h).
#include "prefill/kernel_instances.cuh"

namespace sailfish::prefill {
template Status launch_main_kernel<__half, 8>(const CUtensorMap&, const PrefillParams&, int,
                                                 int, bool, cudaStream_t);
template Status main_kernel_binary_version<__half, 8>(int*);
}  // namespace sailfish::prefill
