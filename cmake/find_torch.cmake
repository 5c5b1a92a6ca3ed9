# libtorch for the timed runner. Sets TORCH_LIBRARIES, TORCH_INSTALL_PREFIX,
# Torch_VERSION and ZB_HAVE_CUDA.
#
# Where: Torch_DIR or CMAKE_PREFIX_PATH when they name one; otherwise the torch
# module of the Python that runs the build (ZB_PYTHON, the Python_EXECUTABLE
# that pip's build passes, or python3 on PATH).
#
# How: torch's own CMake config when torch is CPU-only or a CUDA toolkit is
# found. A CUDA torch's config refuses to configure without a toolkit, though
# zero-bench compiles no kernel; there (or with -DZB_CUDA=OFF) the targets are
# made from torch's include and lib folders, as torch.utils.cpp_extension does,
# and the runner's CUDA parts (CUDA events, -b nccl) are left out.
# The Python that builds zero-bench (find_mpi.cmake looks beside it too).
set(ZB_BUILD_PYTHON "${ZB_PYTHON}")
if(NOT ZB_BUILD_PYTHON)
  set(ZB_BUILD_PYTHON "${Python_EXECUTABLE}")
endif()
if(NOT ZB_BUILD_PYTHON)
  find_program(ZB_PYTHON3 python3)
  set(ZB_BUILD_PYTHON "${ZB_PYTHON3}")
endif()

set(ZB_CUDA AUTO CACHE STRING "The runner's CUDA parts: AUTO (when a CUDA toolkit is found), ON, OFF")
set_property(CACHE ZB_CUDA PROPERTY STRINGS AUTO ON OFF)

function(zb_torch_cmake_dir out)
  find_file(ZB_TORCH_CONFIG_FILE TorchConfig.cmake NO_DEFAULT_PATH
            PATHS ${Torch_DIR} ${CMAKE_PREFIX_PATH} $ENV{CMAKE_PREFIX_PATH} PATH_SUFFIXES . Torch share/cmake/Torch)
  if(NOT ZB_TORCH_CONFIG_FILE)
    execute_process(COMMAND "${ZB_BUILD_PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
                    OUTPUT_VARIABLE prefix OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed ERROR_QUIET)
    if(failed OR NOT EXISTS "${prefix}/Torch/TorchConfig.cmake")
      message(FATAL_ERROR "zero-bench: no libtorch: `${ZB_BUILD_PYTHON}` cannot import torch, and neither Torch_DIR nor "
                          "CMAKE_PREFIX_PATH names one. Install it into the Python that builds zero-bench "
                          "(pip install torch==2.14.1), or set Torch_DIR to a libtorch's share/cmake/Torch, "
                          "or build the plan-only tools alone with -DZB_WITH_TORCH=OFF")
    endif()
    set(ZB_TORCH_CONFIG_FILE "${prefix}/Torch/TorchConfig.cmake" CACHE FILEPATH "libtorch's TorchConfig.cmake" FORCE)
  endif()
  get_filename_component(dir "${ZB_TORCH_CONFIG_FILE}" DIRECTORY)
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

# Imported targets from torch's folders: the include directories and libraries
# cpp_extension uses, the compile definitions torch's config gives torch_cpu.
function(zb_torch_from_folders prefix)
  file(READ "${prefix}/share/cmake/Caffe2/Caffe2Targets.cmake" targets)
  string(REGEX MATCH "add_library\\(torch_cpu SHARED IMPORTED\\)[^)]*INTERFACE_COMPILE_DEFINITIONS \"([^\"]*)\""
         found "${targets}")
  add_library(zb_torch_from_folders INTERFACE)
  target_include_directories(zb_torch_from_folders SYSTEM INTERFACE ${prefix}/include
                             ${prefix}/include/torch/csrc/api/include)
  target_compile_definitions(zb_torch_from_folders INTERFACE ${CMAKE_MATCH_1})
  target_link_libraries(zb_torch_from_folders INTERFACE ${prefix}/lib/libtorch.so ${prefix}/lib/libtorch_cpu.so
                        ${prefix}/lib/libc10.so)
endfunction()

zb_torch_cmake_dir(ZB_TORCH_CMAKE_DIR)
get_filename_component(TORCH_INSTALL_PREFIX "${ZB_TORCH_CMAKE_DIR}/../../.." ABSOLUTE)
file(STRINGS "${ZB_TORCH_CMAKE_DIR}/TorchConfigVersion.cmake" zb_version_line REGEX "set\\(PACKAGE_VERSION ")
string(REGEX REPLACE ".*\"([^\"]+)\".*" "\\1" Torch_VERSION "${zb_version_line}")
set(ZB_TORCH_HAS_CUDA OFF)
if(EXISTS "${TORCH_INSTALL_PREFIX}/lib/libtorch_cuda.so")
  set(ZB_TORCH_HAS_CUDA ON)
endif()

set(zb_use_config ON)
if(ZB_TORCH_HAS_CUDA AND ZB_CUDA STREQUAL "OFF")
  set(zb_use_config OFF)
  set(zb_no_cuda_reason "-DZB_CUDA=OFF")
elseif(ZB_TORCH_HAS_CUDA)
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND)
    if(ZB_CUDA STREQUAL "ON")
      message(FATAL_ERROR "zero-bench: -DZB_CUDA=ON, but no CUDA toolkit was found for torch ${Torch_VERSION}'s CUDA "
                          "build: load one (module load cuda) or point CUDAToolkit_ROOT at it")
    endif()
    set(zb_use_config OFF)
    set(zb_no_cuda_reason "no CUDA toolkit found (module load cuda, or CUDAToolkit_ROOT=DIR, to build them)")
  endif()
endif()

if(zb_use_config)
  if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(TORCH_CUDA_ARCH_LIST "8.0;9.0")  # we compile no kernels; keeps torch's config quiet
  endif()
  find_package(Torch REQUIRED CONFIG PATHS "${ZB_TORCH_CMAKE_DIR}" NO_DEFAULT_PATH)
  # CUDA: libtorch built with it lists libtorch_cuda / c10_cuda among its libraries.
  if(TORCH_CUDA_LIBRARIES OR "${TORCH_LIBRARIES}" MATCHES "c10_cuda")
    set(ZB_HAVE_CUDA ON)
  endif()
  message(STATUS "zero-bench: libtorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX} (its CMake config)")
else()
  zb_torch_from_folders("${TORCH_INSTALL_PREFIX}")
  set(TORCH_LIBRARIES zb_torch_from_folders)
  set(ZB_HAVE_CUDA OFF)
  message(STATUS "zero-bench: libtorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX} (its include and lib folders); "
                 "the runner's CUDA parts (--device cuda, -b nccl) are left out: ${zb_no_cuda_reason}")
endif()
