# The timed runner needs libtorch (tensors, Adam, c10d) and MPI. CUDA parts
# (CUDA events, the allocator's peak, NCCL) are compiled only when the
# libtorch found has CUDA and a CUDA toolkit is there (cmake/find_torch.cmake);
# gloo unless -DZB_WITH_GLOO=OFF (cmake/gloo_headers.cmake).
option(ZB_WITH_GLOO "Build -b gloo (libtorch's ProcessGroupGloo; needs gloo's headers, third_party/gloo)" ON)
include(${CMAKE_CURRENT_LIST_DIR}/find_torch.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/find_mpi.cmake)

# Two layers: zb_comm (the communicator and its backends, over c10d and MPI)
# and zb_runner (tensors, optimizers, timing; the run layer above it).
zb_layer(zb_comm DIR src/comm DEPENDS zb_common ${TORCH_LIBRARIES} SOURCES
  src/comm/world.cpp src/comm/backends.cpp src/comm/c10d_communicator.cpp src/comm/net_interface.cpp
  src/comm/gloo_backend.cpp src/comm/nccl_backend.cpp src/comm/mpi_backend.cpp src/comm/metered_communicator.cpp)
# MPI's headers only where MPI is spoken: the other files compile the same
# whichever MPI was found, Debian's or a wheel's (a compiler cache serves one
# build from the other). Its library goes to whatever links zb_comm.
set(ZB_MPI_SOURCES src/comm/world.cpp src/comm/mpi_backend.cpp)
get_target_property(zb_mpi_includes MPI::MPI_CXX INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(zb_mpi_options MPI::MPI_CXX INTERFACE_COMPILE_OPTIONS)
get_target_property(zb_mpi_definitions MPI::MPI_CXX INTERFACE_COMPILE_DEFINITIONS)
set(zb_mpi_flags "")
foreach(dir ${zb_mpi_includes})
  list(APPEND zb_mpi_flags -isystem ${dir})
endforeach()
if(zb_mpi_options)
  list(APPEND zb_mpi_flags ${zb_mpi_options})
endif()
set_source_files_properties(${ZB_MPI_SOURCES} PROPERTIES COMPILE_OPTIONS "${zb_mpi_flags}")
if(zb_mpi_definitions)
  set_source_files_properties(${ZB_MPI_SOURCES} PROPERTIES COMPILE_DEFINITIONS "${zb_mpi_definitions}")
endif()
target_link_libraries(zb_comm INTERFACE $<LINK_ONLY:MPI::MPI_CXX>)

zb_layer(zb_runner DIR src/runner DEPENDS zb_run zb_comm SOURCES
  src/runner/synthetic.cpp src/runner/zero_rank.cpp src/runner/tensor_zero_state.cpp src/runner/flat_zero_state.cpp
  src/runner/slot_index.cpp src/runner/gradient_reduction.cpp src/runner/parameter_sync.cpp
  src/runner/timed_loop.cpp src/runner/grad_sync.cpp src/runner/device.cpp src/runner/host_pages.cpp
  src/runner/reference_check.cpp src/runner/timed_request.cpp src/runner/record_context.cpp src/runner/timed_run.cpp src/runner/calibrate.cpp src/runner/collectives_table.cpp
  src/runner/progress.cpp src/runner/host_load.cpp src/runner/load_ledger.cpp src/runner/describe_cluster.cpp src/runner/phase_traffic.cpp src/runner/planned_calls_check.cpp
  src/runner/bandwidth_probe.cpp src/runner/collective_probe.cpp src/runner/watchdog.cpp src/runner/termination.cpp src/runner/node_watch.cpp src/runner/slurm_end.cpp
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

if(ZB_HAVE_CUDA)
  foreach(layer zb_comm zb_runner)
    target_compile_definitions(${layer} PRIVATE ZB_HAVE_CUDA USE_C10D_NCCL)
  endforeach()
  include(${CMAKE_CURRENT_LIST_DIR}/nccl_headers.cmake)
endif()
message(STATUS "zero-bench: CUDA parts ${ZB_HAVE_CUDA}")

if(ZB_WITH_GLOO)
  include(${CMAKE_CURRENT_LIST_DIR}/gloo_headers.cmake)
  target_compile_definitions(zb_comm PRIVATE ZB_HAVE_GLOO USE_C10D_GLOO)
  set_property(SOURCE src/comm/gloo_backend.cpp APPEND PROPERTY COMPILE_OPTIONS -isystem ${ZB_GLOO_INCLUDE_DIR})
  file(GLOB zb_torch_shared_libs "${TORCH_INSTALL_PREFIX}/lib/libtorch_cpu.so" "${TORCH_INSTALL_PREFIX}/lib/libtorch.so")
  string(REPLACE ";" "|" zb_torch_shared_libs "${zb_torch_shared_libs}")
  add_custom_command(TARGET zb_comm POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DARCHIVE=$<TARGET_FILE:zb_comm> "-DLIBS=${zb_torch_shared_libs}"
            -P ${CMAKE_CURRENT_LIST_DIR}/check_gloo_symbols.cmake VERBATIM)
else()
  message(STATUS "zero-bench: -b gloo left out (ZB_WITH_GLOO=OFF)")
endif()

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
