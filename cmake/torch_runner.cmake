# The timed runner needs libtorch (tensors, Adam, c10d) and MPI. CUDA parts
# are compiled only when the libtorch found has CUDA.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")  # we compile no kernels; keeps torch's config quiet
endif()
find_package(Torch REQUIRED)
find_package(MPI REQUIRED COMPONENTS CXX)
message(STATUS "zero-bench: libtorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")
target_sources(zero_bench PRIVATE src/bench/timed_run_unavailable.cpp)
