# Compile against the NCCL that libtorch loads, never another one.
#
# ProcessGroupNCCL::Options holds an ncclConfig_t by value, and its size
# changes between NCCL releases (80 B in 2.28, 96 B in 2.30): compiled against
# another nccl.h, our inline Options::create() allocates fewer bytes than
# libtorch's constructor writes. The PyPI wheel's NCCL lives in
# site-packages/nvidia/nccl; its include directory goes first (BEFORE the CUDA
# toolkit's, which may carry an older nccl.h), and the build fails if the
# header the compiler finds is not that one. zero_bench also compares the
# loaded library's version at start-up (src/comm/nccl_backend.cpp).
file(GLOB ZB_WHEEL_NCCL_HEADER "${TORCH_INSTALL_PREFIX}/../nvidia/nccl/include/nccl.h"
                               "${TORCH_INSTALL_PREFIX}/../nvidia/*/include/nccl.h")
if(ZB_WHEEL_NCCL_HEADER)
  list(GET ZB_WHEEL_NCCL_HEADER 0 ZB_WHEEL_NCCL_HEADER)
  get_filename_component(ZB_NCCL_INCLUDE_DIR "${ZB_WHEEL_NCCL_HEADER}" DIRECTORY)
  file(STRINGS "${ZB_WHEEL_NCCL_HEADER}" ZB_NCCL_VERSION_LINES REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define NCCL_${part} ([0-9]+).*" "\\1" ZB_NCCL_${part} "${ZB_NCCL_VERSION_LINES}")
  endforeach()
  set(ZB_NCCL_VERSION "${ZB_NCCL_MAJOR}.${ZB_NCCL_MINOR}.${ZB_NCCL_PATCH}")
  target_include_directories(zb_comm BEFORE PUBLIC "${ZB_NCCL_INCLUDE_DIR}")
  # nccl_backend.cpp: #error unless the nccl.h it includes has this version.
  target_compile_definitions(zb_comm PRIVATE ZB_EXPECTED_NCCL_MAJOR=${ZB_NCCL_MAJOR}
                             ZB_EXPECTED_NCCL_MINOR=${ZB_NCCL_MINOR} ZB_EXPECTED_NCCL_PATCH=${ZB_NCCL_PATCH})
  message(STATUS "zero-bench: NCCL ${ZB_NCCL_VERSION} headers from libtorch's wheel: ${ZB_NCCL_INCLUDE_DIR}")
else()
  message(WARNING "zero-bench: no nccl.h beside libtorch (${TORCH_INSTALL_PREFIX}/../nvidia/nccl/include); "
                  "the NCCL headers found on the include path are used, and zero_bench refuses -b nccl at "
                  "start-up if the loaded NCCL's version differs from theirs")
endif()
