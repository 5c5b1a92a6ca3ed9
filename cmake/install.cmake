# `pip install .` (pyproject.toml, scikit-build-core) or `cmake --install`:
# zero_bench, zero_analyze and the runner module side by side in one bin
# folder (under pip, the environment's bin). Each finds its libraries (libtorch
# and the wheels' CUDA libraries beside it, a wheel's MPI) through RUNPATHs:
# relative to where it lands ($ORIGIN) when they lie in the same Python
# environment, so that a moved venv still runs; absolute otherwise. None
# points into the build folder, which pip deletes.
if(SKBUILD)
  set(ZB_INSTALL_BINDIR "${SKBUILD_SCRIPTS_DIR}")
  execute_process(COMMAND "${Python_EXECUTABLE}" -c "import sys, sysconfig; print(sys.prefix); print(sysconfig.get_path('scripts'))"
                  OUTPUT_VARIABLE zb_python_paths OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "\n" ";" zb_python_paths "${zb_python_paths}")
  list(GET zb_python_paths 0 zb_python_prefix)
  list(GET zb_python_paths 1 zb_final_bindir)
  get_filename_component(zb_python_prefix "${zb_python_prefix}" REALPATH)
  get_filename_component(zb_final_bindir "${zb_final_bindir}" REALPATH)
else()
  set(ZB_INSTALL_BINDIR bin)
endif()

# The RUNPATH entries for libraries in `dirs`.
function(zb_install_runpath out)
  set(entries "")
  foreach(dir ${ARGN})
    get_filename_component(dir "${dir}" REALPATH)
    string(FIND "${dir}/" "${zb_python_prefix}/" at)
    if(SKBUILD AND at EQUAL 0)
      file(RELATIVE_PATH rel "${zb_final_bindir}" "${dir}")
      list(APPEND entries "$ORIGIN/${rel}")
    else()
      list(APPEND entries "${dir}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES entries)
  set(${out} "${entries}" PARENT_SCOPE)
endfunction()

# The folders of the shared libraries MPI::MPI_CXX links, unless the system's.
set(zb_mpi_lib_dirs "")
set(zb_mpi_libs "")
if(TARGET MPI::MPI_CXX)  # ZB_WITH_TORCH=OFF builds the plan-only tools without MPI
  get_target_property(zb_mpi_libs MPI::MPI_CXX INTERFACE_LINK_LIBRARIES)
endif()
foreach(lib ${zb_mpi_libs})
  if(IS_ABSOLUTE "${lib}")
    get_filename_component(dir "${lib}" DIRECTORY)
    if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
      list(APPEND zb_mpi_lib_dirs "${dir}")
    endif()
  endif()
endforeach()

install(TARGETS zero_analyze zero_choose DESTINATION "${ZB_INSTALL_BINDIR}")
if(ZB_WITH_TORCH)
  zb_install_runpath(zb_bench_runpath ${zb_mpi_lib_dirs})
  zb_install_runpath(zb_module_runpath "${TORCH_INSTALL_PREFIX}/lib" ${ZB_NVIDIA_LIB_DIRS} ${zb_mpi_lib_dirs})
  set_target_properties(zero_bench PROPERTIES INSTALL_RPATH "${zb_bench_runpath}")
  set_target_properties(zb_runner_module PROPERTIES INSTALL_RPATH "${zb_module_runpath}")
  install(TARGETS zero_bench zb_runner_module DESTINATION "${ZB_INSTALL_BINDIR}")
  message(STATUS "zero-bench: installed runner's RUNPATH: ${zb_module_runpath}")
else()
  install(TARGETS zero_bench DESTINATION "${ZB_INSTALL_BINDIR}")
endif()
