// Decode kernel instances for f16 activations, int4 weights (see kernel_instances.h).
#include "decode/kernel_instances.cuh"

namespace sailfish::decode {
template Status launch_main_kernel<__half, 4>(const DecodeParams&, int, bool, int, dim3,
                                              int, bool, cudaStream_t);
template Status main_kernel_occupancy<__half, 4>(int, bool, bool, int, bool, int, int, int*);
template Status warp_split_max_clusters<__half, 4>(int, bool, int, bool, int, int, int, int*);
template Status launch_moe_kernel<__half, 4>(const DecodeParams&, int, dim3, int, bool,
                                             cudaStream_t);
template Status moe_kernel_occupancy<__half, 4>(int, bool, int, int*);
template Status moe_max_clusters<__half, 4>(int, bool, int, int, int*);
}  // namespace sailfish::decode
