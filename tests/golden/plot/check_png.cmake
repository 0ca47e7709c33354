# Runs COMMAND (arguments separated by '|'), expects exit code 0, then checks that each file of PNG
# (separated by '|') exists and starts with the 8-byte PNG signature, and that each file of
# ALSO_EXISTS (the gnuplot scripts written beside the figures) exists.
# Usage: cmake -DCOMMAND=dnnsim|plot|… -DPNG=a.png -DALSO_EXISTS=a.gp -P check_png.cmake
string(REPLACE "|" ";" command "${COMMAND}")
string(REPLACE "|" ";" pngs "${PNG}")
string(REPLACE "|" ";" others "${ALSO_EXISTS}")
foreach(png IN LISTS pngs)
  file(REMOVE "${png}")  # a figure left by an earlier run must not pass for a new one
endforeach()
execute_process(COMMAND ${command} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "exit code ${code}, expected 0\nstdout:\n${out}\nstderr:\n${err}")
endif()
foreach(png IN LISTS pngs)
  if(NOT EXISTS "${png}")
    message(FATAL_ERROR "${png} was not written\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  file(READ "${png}" signature LIMIT 8 HEX)
  if(NOT signature STREQUAL "89504e470d0a1a0a")
    message(FATAL_ERROR "${png} is not a PNG (starts with ${signature})")
  endif()
endforeach()
foreach(other IN LISTS others)
  if(NOT EXISTS "${other}")
    message(FATAL_ERROR "${other} was not written")
  endif()
endforeach()
