# GPU suite: every test skips (GTEST_SKIP) when no CUDA device is present, so it runs on CI too.
file(GLOB SAILFISH_GPU_TEST_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/gpu/*.cu ${CMAKE_CURRENT_SOURCE_DIR}/gpu/*.cpp)
add_executable(sailfish_gpu_tests ${SAILFISH_GPU_TEST_SOURCES} cpu/test_helpers.cpp)
target_link_libraries(sailfish_gpu_tests PRIVATE sailfish sailfish_gpu_model GTest::gtest_main)
target_include_directories(sailfish_gpu_tests PRIVATE ${PROJECT_SOURCE_DIR}/src
                           ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/cpu)
sailfish_cuda_target(sailfish_gpu_tests)
gtest_discover_tests(sailfish_gpu_tests PROPERTIES LABELS gpu DISCOVERY_TIMEOUT 120)
