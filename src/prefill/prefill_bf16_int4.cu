// Prefill kernel instances for bf16 activations, int4 weights (see kernel_instances.h).
#include "prefill/kernel_instances.cuh"

namespace sailfish::prefill {
template Status launch_main_kernel<__nv_bfloat16, 4>(const CUtensorMap&, const PrefillParams&, int,
                                                 int, bool, cudaStream_t);
template Status main_kernel_binary_version<__nv_bfloat16, 4>(int*);
}  // namespace sailfish::prefill
