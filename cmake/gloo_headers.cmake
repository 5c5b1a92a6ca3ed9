# gloo's headers, which libtorch's ProcessGroupGloo.hpp includes but torch's
# wheel does not ship. Sets ZB_GLOO_INCLUDE_DIR, or fails the configure.
#
# Default: the copy carried in third_party/gloo (Debian's libgloo-dev, pinned by
# third_party/gloo/SHA256SUMS), used only with a torch listed in
# third_party/gloo/TORCH_VERSIONS; -DZB_GLOO_INCLUDE_DIR=DIR names another set.
# Either way, after zb_comm builds, every gloo symbol it calls must be defined
# in the libtorch it links (cmake/check_gloo_symbols.cmake): a header set that
# does not match fails the build instead of running.
set(ZB_GLOO_INCLUDE_DIR "" CACHE PATH "gloo headers matching libtorch's gloo (default: third_party/gloo)")
set(zb_gloo_carried ${CMAKE_SOURCE_DIR}/third_party/gloo)

if(ZB_GLOO_INCLUDE_DIR)
  if(NOT EXISTS "${ZB_GLOO_INCLUDE_DIR}/gloo/algorithm.h")
    message(FATAL_ERROR "zero-bench: ZB_GLOO_INCLUDE_DIR=${ZB_GLOO_INCLUDE_DIR} has no gloo/algorithm.h")
  endif()
  message(STATUS "zero-bench: gloo headers from ZB_GLOO_INCLUDE_DIR=${ZB_GLOO_INCLUDE_DIR}")
  return()
endif()

file(STRINGS ${zb_gloo_carried}/TORCH_VERSIONS zb_gloo_torch_versions REGEX "^[0-9]")
if(NOT Torch_VERSION IN_LIST zb_gloo_torch_versions)
  string(REPLACE ";" ", " zb_listed "${zb_gloo_torch_versions}")
  message(FATAL_ERROR "zero-bench: the gloo headers in third_party/gloo are checked against torch ${zb_listed}, not "
                      "torch ${Torch_VERSION}: build with -DZB_WITH_GLOO=OFF (-b mpi and -b nccl only), or name gloo "
                      "headers that match this torch's gloo with -DZB_GLOO_INCLUDE_DIR=DIR (docs/building.md#gloo)")
endif()
file(STRINGS ${zb_gloo_carried}/SHA256SUMS zb_gloo_sums)
foreach(line ${zb_gloo_sums})
  string(REGEX MATCH "^([0-9a-f]+)  (.+)$" ok "${line}")
  set(file ${zb_gloo_carried}/include/${CMAKE_MATCH_2})
  set(want ${CMAKE_MATCH_1})
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "zero-bench: third_party/gloo/include/${CMAKE_MATCH_2} is missing (third_party/update.sh)")
  endif()
  file(SHA256 "${file}" got)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "zero-bench: third_party/gloo/include/${CMAKE_MATCH_2} differs from its pinned checksum "
                        "(third_party/gloo/SHA256SUMS); restore it with third_party/update.sh")
  endif()
endforeach()
set(ZB_GLOO_INCLUDE_DIR ${zb_gloo_carried}/include)
message(STATUS "zero-bench: gloo headers carried in third_party/gloo (checked for torch ${Torch_VERSION})")
