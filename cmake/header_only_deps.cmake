# CLI11 and nlohmann/json: a copy found on the system or in a user prefix
# (CMAKE_PREFIX_PATH, CLI11_DIR, nlohmann_json_DIR) wins; otherwise the copy
# zero-bench carries in third_party/include (versions in third_party/README.md).
#
# The carried copy is always on the include path, but searched last
# (-idirafter, after the compiler's own system folders): a system copy shadows
# it with no change to any compile command, so a build with the system's
# headers and one without them compile the same command lines (which lets a
# compiler cache serve one from the other).
set(ZB_THIRD_PARTY_INCLUDE ${CMAKE_SOURCE_DIR}/third_party/include)
add_library(zb_header_only_deps INTERFACE)
target_compile_options(zb_header_only_deps INTERFACE "SHELL:-idirafter ${ZB_THIRD_PARTY_INCLUDE}")

# zb_header_only_dep(PACKAGE MIN_VERSION HEADER TARGETS...): links the package's
# TARGETS when CMake finds its config; says which copy the compiler will read.
function(zb_header_only_dep package min_version header)
  find_package(${package} ${min_version} QUIET CONFIG)
  if(${package}_FOUND)
    target_link_libraries(zb_header_only_deps INTERFACE ${ARGN})
    message(STATUS "zero-bench: ${package} ${${package}_VERSION} from ${${package}_DIR}")
    return()
  endif()
  find_path(ZB_${package}_SYSTEM_INCLUDE ${header} PATHS ${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES} NO_DEFAULT_PATH)
  if(ZB_${package}_SYSTEM_INCLUDE)
    message(STATUS "zero-bench: ${package}: the compiler's own copy in ${ZB_${package}_SYSTEM_INCLUDE} (no CMake config)")
  else()
    message(STATUS "zero-bench: ${package}: the copy carried in third_party/include (none on the system)")
  endif()
endfunction()

zb_header_only_dep(nlohmann_json 3.2 nlohmann/json.hpp nlohmann_json::nlohmann_json)
zb_header_only_dep(CLI11 2.0 CLI/CLI.hpp CLI11::CLI11)
