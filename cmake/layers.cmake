# The layers of zero-bench, one static library each, pointing one way:
#   zb_common <- zb_models <- zb_partitioners <- zb_run <- zb_bench, zb_runner
#   zb_common <- zb_comm <- zb_runner;  zb_common <- zb_analyze
#   zb_run, zb_analyze <- zb_choose (plans made in memory, priced by the analysis)
# A layer's headers are visible only to the layers that link it: every layer
# has its own include root (build/layers/<name>/) holding a link to its own
# folder alone, so `#include "src/run/config.hpp"` from a partitioner finds
# nothing and fails to build. Quoted includes name files from the repository
# root (or the including file's own folder); a `..` would climb past the
# roots, so a check run before each layer compiles refuses it.

set(ZB_LAYER_ROOTS ${CMAKE_BINARY_DIR}/layers)

# zb_layer(NAME DIR folder SOURCES files... [DEPENDS layers-and-libraries...])
function(zb_layer name)
  cmake_parse_arguments(L "" "DIR" "SOURCES;DEPENDS" ${ARGN})
  foreach(src ${L_SOURCES})
    if(NOT src MATCHES "^${L_DIR}/" AND NOT IS_ABSOLUTE "${src}")
      message(FATAL_ERROR "layer ${name}: source ${src} is not under its folder ${L_DIR}")
    endif()
  endforeach()
  set(root ${ZB_LAYER_ROOTS}/${name})
  get_filename_component(parent ${root}/${L_DIR} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${L_DIR} ${root}/${L_DIR} SYMBOLIC)
  zb_include_check(${name} ${L_DIR} stamp)
  add_library(${name} STATIC ${L_SOURCES} ${stamp})
  target_include_directories(${name} PUBLIC ${root})
  target_link_libraries(${name} PUBLIC ${L_DEPENDS})
  target_compile_options(${name} PRIVATE -Wall -Wextra)
endfunction()

# Runs cmake/check_includes.cmake over every source and header of DIR before
# the layer compiles; sets OUT_STAMP to the stamp file the layer depends on.
function(zb_include_check name dir out_stamp)
  file(GLOB_RECURSE files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.cpp ${CMAKE_SOURCE_DIR}/${dir}/*.hpp)
  set(stamp ${ZB_LAYER_ROOTS}/${name}.includes-checked)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DDIR=${CMAKE_SOURCE_DIR}/${dir} -P ${ZB_CHECK_INCLUDES}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${files} ${ZB_CHECK_INCLUDES}
    COMMENT "Checking the includes of layer ${name}" VERBATIM)
  set(${out_stamp} ${stamp} PARENT_SCOPE)
endfunction()

set(ZB_CHECK_INCLUDES ${CMAKE_CURRENT_LIST_DIR}/check_includes.cmake)
