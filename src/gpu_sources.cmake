# GPU sources of the library (included from src/CMakeLists.txt when CUDA is enabled): every .cu
# and .cpp file of the GPU folders, one folder per role.
file(GLOB SAILFISH_GPU_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/api/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/api/*.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/common/*.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/dense/*.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/repack/*.cu ${CMAKE_CURRENT_SOURCE_DIR}/repack/*.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/decode/*.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/moe/*.cu ${CMAKE_CURRENT_SOURCE_DIR}/moe/device_experts.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/moe/plan_moe.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/prefill/*.cu ${CMAKE_CURRENT_SOURCE_DIR}/prefill/*.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/matmul_nbits/*.cu ${CMAKE_CURRENT_SOURCE_DIR}/matmul_nbits/*.cpp)
target_sources(sailfish PRIVATE ${SAILFISH_GPU_SOURCES})
target_compile_definitions(sailfish PUBLIC SAILFISH_HAS_CUDA=1)
# The prefill tier's wgmma kernels exist only in sm_90a code: plan() offers the tier only when it
# was compiled (a plain sm_90 build runs on the same devices but has no wgmma).
if("90a" IN_LIST SAILFISH_CUDA_ARCHS)
  target_compile_definitions(sailfish PRIVATE SAILFISH_HAS_SM90A_KERNELS=1)
endif()
target_link_libraries(sailfish PUBLIC CUDA::cudart CUDA::cublasLt)
sailfish_cuda_target(sailfish)
