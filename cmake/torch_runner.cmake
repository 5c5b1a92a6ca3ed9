# The timed runner needs libtorch (tensors, Adam, c10d) and MPI. CUDA parts
# (CUDA events, the allocator's peak, NCCL) are compiled only when the
# libtorch found has CUDA; gloo only when gloo's headers are found.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")  # we compile no kernels; keeps torch's config quiet
endif()
find_package(Torch REQUIRED)
find_package(MPI REQUIRED COMPONENTS CXX)
message(STATUS "zero-bench: libtorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")

# Two layers: zb_comm (the communicator and its backends, over c10d and MPI)
# and zb_runner (tensors, optimizers, timing; the run layer above it).
zb_layer(zb_comm DIR src/comm DEPENDS zb_common ${TORCH_LIBRARIES} MPI::MPI_CXX SOURCES
  src/comm/world.cpp src/comm/backends.cpp src/comm/c10d_communicator.cpp src/comm/net_interface.cpp
  src/comm/gloo_backend.cpp src/comm/nccl_backend.cpp src/comm/mpi_backend.cpp src/comm/metered_communicator.cpp)
zb_layer(zb_runner DIR src/runner DEPENDS zb_run zb_comm SOURCES
  src/runner/synthetic.cpp src/runner/zero_rank.cpp src/runner/tensor_zero_state.cpp src/runner/flat_zero_state.cpp
  src/runner/slot_index.cpp src/runner/gradient_reduction.cpp src/runner/parameter_sync.cpp
  src/runner/timed_loop.cpp src/runner/grad_sync.cpp src/runner/device.cpp src/runner/host_pages.cpp
  src/runner/reference_check.cpp src/runner/timed_request.cpp src/runner/record_context.cpp src/runner/timed_run.cpp src/runner/calibrate.cpp src/runner/collectives_table.cpp src/runner/phase_traffic.cpp src/runner/planned_calls_check.cpp
  src/runner/bandwidth_probe.cpp src/runner/collective_probe.cpp src/runner/watchdog.cpp src/runner/termination.cpp
  src/runner/slurm_facts.cpp src/runner/optim/optimizer.cpp src/runner/optim/torch_optimizers.cpp
  src/runner/optim/foreach_optimizers.cpp src/runner/optim/fused_optimizers.cpp src/runner/optim/native_optimizers.cpp
  src/runner/optim/muon.cpp
  src/runner/optim/mixed_precision.cpp)
# libtorch >= 2.10 headers require C++20; the rest of zero-bench stays C++17.
foreach(layer zb_comm zb_runner)
  target_compile_features(${layer} PUBLIC cxx_std_20)
  target_compile_options(${layer} PRIVATE -Wno-unused-parameter)
endforeach()
# The native optimizer and the triad probe: `omp simd` loops (no OpenMP runtime:
# threads come from ATen's pool), sqrt inlined, no FMA contraction so that a
# sharded step equals the unsharded one bitwise.
set_source_files_properties(src/runner/optim/native_optimizers.cpp src/runner/bandwidth_probe.cpp PROPERTIES
  COMPILE_OPTIONS "-O3;-fopenmp-simd;-fno-math-errno;-ffp-contract=off")

# CUDA: libtorch built with it lists libtorch_cuda / c10_cuda among its libraries.
if(TORCH_CUDA_LIBRARIES OR "${TORCH_LIBRARIES}" MATCHES "c10_cuda")
  set(ZB_HAVE_CUDA ON)
  foreach(layer zb_comm zb_runner)
    target_compile_definitions(${layer} PRIVATE ZB_HAVE_CUDA USE_C10D_NCCL)
  endforeach()
  include(${CMAKE_CURRENT_LIST_DIR}/nccl_headers.cmake)
endif()
message(STATUS "zero-bench: CUDA parts ${ZB_HAVE_CUDA}")

# gloo: the PyPI wheel ships ProcessGroupGloo.hpp but not gloo's own headers;
# Debian's libgloo-dev provides them (only pointers to gloo types cross the
# boundary, so the header version need not match libtorch's bundled gloo).
find_path(ZB_GLOO_INCLUDE_DIR gloo/algorithm.h HINTS ${TORCH_INCLUDE_DIRS})
if(ZB_GLOO_INCLUDE_DIR)
  target_compile_definitions(zb_comm PRIVATE ZB_HAVE_GLOO USE_C10D_GLOO)
  target_include_directories(zb_comm PRIVATE ${ZB_GLOO_INCLUDE_DIR})
endif()
message(STATUS "zero-bench: gloo headers: ${ZB_GLOO_INCLUDE_DIR}")

# The wheel's CUDA libraries (NCCL, cuDNN, ...) live beside torch in
# site-packages/nvidia/*/lib: link and run against those, not a system NCCL.
file(GLOB ZB_NVIDIA_LIB_DIRS "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
foreach(dir ${ZB_NVIDIA_LIB_DIRS})
  target_link_options(zb_comm INTERFACE "LINKER:-rpath-link,${dir}")
endforeach()

# zero_bench loads the runner (and so libtorch) only for timed runs and
# --calibrate; MPI is linked into the executable so that its plugins find
# libmpi's symbols.
add_library(zb_runner_module MODULE src/runner/module_entry.cpp)
target_link_libraries(zb_runner_module PRIVATE zb_runner)
add_dependencies(zb_runner_module zb_runner_interface)
set_target_properties(zb_runner_module PROPERTIES OUTPUT_NAME zero_bench_runner PREFIX "lib"
                      BUILD_RPATH "${ZB_NVIDIA_LIB_DIRS}")
target_sources(zero_bench PRIVATE src/bench/timed_run_loader.cpp)
target_link_libraries(zero_bench PRIVATE MPI::MPI_CXX ${CMAKE_DL_LIBS})
add_dependencies(zero_bench zb_runner_module)
