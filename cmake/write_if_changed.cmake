# zb_write_if_changed(FILE TEXT): writes TEXT to FILE only when it differs, so
# that what includes FILE is rebuilt only when its content changed.
function(zb_write_if_changed file text)
  set(old "")
  if(EXISTS ${file})
    file(READ ${file} old)
  endif()
  if(NOT "${old}" STREQUAL "${text}")
    file(WRITE ${file} "${text}")
  endif()
endfunction()
