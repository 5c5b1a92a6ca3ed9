# cmake -DDIR=folder -P check_includes.cmake: fails naming every #include in
# the folder's .cpp/.hpp files that climbs with ".." or names an absolute
# path. Such an include would reach past the include roots that keep each
# layer to the layers it links (cmake/layers.cmake).
file(GLOB_RECURSE files ${DIR}/*.cpp ${DIR}/*.hpp)
set(bad "")
foreach(file ${files})
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]*)[\">].*$" "\\1" path "${line}")
    if(path MATCHES "(^|/)\\.\\.(/|$)" OR IS_ABSOLUTE "${path}")
      string(APPEND bad "\n  ${file}: #include \"${path}\"")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "includes that climb out of their layer's include roots:${bad}\n"
          "Name the file from the repository root (e.g. \"src/common/errors.hpp\"); a layer may include "
          "its own folder and the layers it links (cmake/layers.cmake).")
endif()
