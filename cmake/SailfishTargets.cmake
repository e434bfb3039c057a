# Helpers shared by the library, tests and bench.

# Applies the project's CUDA compile flags to the .cu sources of a target.
function(sailfish_cuda_target target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${SAILFISH_CUDA_FLAGS}>)
  set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
endfunction()
